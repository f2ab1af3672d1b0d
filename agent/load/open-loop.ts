// Open loop: send each request of the stripe at its intended time, whatever is in flight, so a
// slow server cannot slow the offered load (no coordinated omission). Late sends are recorded as
// schedule lag, never skipped. The send's instant is also watched by every socket read meanwhile
// (due-sends.ts), so a burst of reads does not hold a due send back until it ends.
import type { ClassStripe } from '../../shared/shares.js';
import { sendAt } from '../due-sends.js';
import { sleepUntil } from '../timing.js';

/** Launches per event-loop turn when requests are overdue (about 1–2 ms of work). */
const MAX_LAUNCHES_PER_TURN = 64;

/** How far ahead of its instant the next request is built (its body, headers and record). */
const BUILD_AHEAD_NS = 20_000_000;

/**
 * Launches every arrival of `stripe` at its due time; resolves when the last has been launched.
 * `prepare` builds a request and returns its send; the next request is built while the loop waits
 * for it, so at its instant only the stamp and the dispatch are left.
 */
export async function runOpenLoop(
  stripe: ClassStripe,
  nowNs: () => number,
  prepare: (requestIndex: number, intendedNs: number) => () => void,
  signal: AbortSignal,
): Promise<void> {
  const { arrivalsNs, requestIndices } = stripe;
  let i = 0;
  /** The send of arrival `i`, when it was built ahead. */
  let next: (() => void) | undefined;
  while (i < arrivalsNs.length && !signal.aborted) {
    const now = nowNs();
    // What is due goes out in schedule order, but at most a batch per event-loop turn: an agent
    // that has fallen behind must still read responses, flush records and send heartbeats.
    const turnEnd = Math.min(arrivalsNs.length, i + MAX_LAUNCHES_PER_TURN);
    while (i < turnEnd && arrivalsNs[i]! <= now) {
      (next ?? prepare(requestIndices[i]!, arrivalsNs[i]!))();
      next = undefined;
      i++;
    }
    if (i >= arrivalsNs.length) break;
    if (arrivalsNs[i]! <= nowNs()) {
      await new Promise<void>((r) => setImmediate(r));
      continue;
    }
    if (next === undefined) {
      if (arrivalsNs[i]! - nowNs() > BUILD_AHEAD_NS) await sleepUntil(nowNs, arrivalsNs[i]! - BUILD_AHEAD_NS, signal);
      if (signal.aborted) break;
      next = prepare(requestIndices[i]!, arrivalsNs[i]!);
    }
    await sendAt(nowNs, arrivalsNs[i]!, signal);
  }
}
