// Waiting for an instant on the event loop: a coarse timer until ~1.2 ms before, then the
// metronome's thread until ~150 µs before, then yielding turn by turn for the rest.
import { metronome } from './metronome.js';

// Node timers have 1 ms granularity: a timer aimed 1.2 ms early fires before the instant.
const FINE_NS = 1_200_000;
// The metronome wakes the loop ~0.1 ms after the instant asked for (a futex wake, then a message:
// p50 120–150 µs, p99 ~250 µs on a quiet 2-core VM, 2026-12-07). Asked for this much earlier, the
// loop is usually woken just before the instant and yields a few turns to it: sends on time to
// microseconds, at the price of tens of microseconds of turns a send instead of a whole millisecond.
const WAKE_EARLY_NS = 150_000;

/**
 * Resolves at (or just after) `dueNs` on the `nowNs` clock, or early when `signal` aborts; once
 * `superseded` says so (the caller was served another way), it stops at its next step, unresolved.
 */
export function sleepUntil(nowNs: () => number, dueNs: number, signal?: AbortSignal, superseded?: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const step = (): void => {
      if (superseded?.()) return;
      const wait = dueNs - nowNs();
      if (signal?.aborted || wait <= 0) resolve();
      else if (wait > FINE_NS) setTimeout(step, (wait - FINE_NS) / 1e6 + 0.5);
      else {
        const m = metronome();
        // Near the instant, or without the thread (before it is up, or where none can start):
        // yield turn by turn until due, on time but busy meanwhile.
        if (wait <= WAKE_EARLY_NS || m === null || !m.ready) setImmediate(step);
        else void m.at(process.hrtime.bigint() + BigInt(Math.ceil(wait - WAKE_EARLY_NS))).then(step);
      }
    };
    step();
  });
}
