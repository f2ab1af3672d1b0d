// A periodic check that judges silence (a peer that sent nothing for a while) must not blame the
// peer for this process's own stall: after a blocked event loop (a long synchronous turn, a GC
// pause, a starved CPU), timers run before I/O, so the first tick sees every frame that arrived
// meanwhile as missing; and a pong needs a round trip after the stall, which the next busy turn
// can keep unread past the following tick. So silence is counted from the end of this process's
// last stall at the latest: a tick that comes late marks that end. Used by the link heartbeat
// (shared/heartbeat.ts) and the coordinator's in-run watchdog (coordinator/run/watchdog.ts).

/** A tick more than this many periods after the previous one came late: the loop was blocked. */
export const LATE_TICK_PERIODS = 2;

/** The time base of a periodic silence check that does not count this process's own stalls. */
export class StallClock {
  private lastTickMs: number;
  private resumedAtMs: number;

  constructor(
    private readonly periodMs: number,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.lastTickMs = this.resumedAtMs = nowMs();
  }

  /** Call at each tick of the check; returns the tick's time. A late tick marks the end of a stall. */
  tick(): number {
    const now = this.nowMs();
    if (now - this.lastTickMs > LATE_TICK_PERIODS * this.periodMs) this.resumedAtMs = now;
    this.lastTickMs = now;
    return now;
  }

  /** How long a peer last heard at `lastHeardMs` has been silent at `nowMs`, counted from the end of the last stall at the latest. */
  silenceMs(lastHeardMs: number, nowMs: number): number {
    return nowMs - Math.max(lastHeardMs, this.resumedAtMs);
  }
}
