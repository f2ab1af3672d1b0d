// A periodic check that judges silence (a peer that sent nothing for a while) must not blame the
// peer for this process's own stall: after a blocked event loop (a long synchronous turn, a GC
// pause, a starved CPU), timers run before I/O, so the first tick sees every frame that arrived
// meanwhile as missing. Such a tick is late; its silence is judged on the next one, after the
// frames were read. Used by the link heartbeat (shared/heartbeat.ts) and the coordinator's
// in-run watchdog (coordinator/run.ts).

/** A tick more than this many periods after the previous one came late. */
export const LATE_TICK_PERIODS = 2;

/**
 * Returns the function to call at each tick of a `periodMs` timer: true when this tick came late
 * (more than LATE_TICK_PERIODS periods after the previous tick, or after the start).
 */
export function lateTickDetector(periodMs: number, nowMs: () => number = Date.now): () => boolean {
  let lastTickMs = nowMs();
  return () => {
    const now = nowMs();
    const late = now - lastTickMs > LATE_TICK_PERIODS * periodMs;
    lastTickMs = now;
    return late;
  };
}
