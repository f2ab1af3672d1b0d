// Open loop: send each request of the stripe at its intended time, whatever is in flight, so a
// slow server cannot slow the offered load (no coordinated omission). Late sends are recorded as
// schedule lag, never skipped.
import type { ClassStripe } from '../../shared/shares.js';
import { sleepUntil } from '../timing.js';

/** Launches per event-loop turn when requests are overdue (about 1–2 ms of work). */
const MAX_LAUNCHES_PER_TURN = 64;

/** Launches every arrival of `stripe` at its due time; resolves when the last has been launched. */
export async function runOpenLoop(
  stripe: ClassStripe,
  nowNs: () => number,
  launch: (requestIndex: number, intendedNs: number) => void,
  signal: AbortSignal,
): Promise<void> {
  const { arrivalsNs, requestIndices } = stripe;
  let i = 0;
  while (i < arrivalsNs.length && !signal.aborted) {
    const now = nowNs();
    // What is due goes out in schedule order, but at most a batch per event-loop turn: an agent
    // that has fallen behind must still read responses, flush records and send heartbeats.
    const turnEnd = Math.min(arrivalsNs.length, i + MAX_LAUNCHES_PER_TURN);
    while (i < turnEnd && arrivalsNs[i]! <= now) {
      launch(requestIndices[i]!, arrivalsNs[i]!);
      i++;
    }
    if (i >= arrivalsNs.length) break;
    if (arrivalsNs[i]! <= nowNs()) await new Promise<void>((r) => setImmediate(r));
    else await sleepUntil(nowNs, arrivalsNs[i]!, signal);
  }
}
