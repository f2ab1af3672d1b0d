// Open loop: send each request of the stripe at its intended time, whatever is in flight, so a
// slow server cannot slow the offered load (no coordinated omission). Late sends are recorded as
// schedule lag, never skipped.
import type { ClassStripe } from '../../shared/shares.js';
import { sleepUntil } from '../timing.js';

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
    // Everything already due goes out in this turn, in schedule order.
    while (i < arrivalsNs.length && arrivalsNs[i]! <= now) {
      launch(requestIndices[i]!, arrivalsNs[i]!);
      i++;
    }
    if (i < arrivalsNs.length) await sleepUntil(nowNs, arrivalsNs[i]!, signal);
  }
}
