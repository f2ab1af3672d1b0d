// Closed loop: keep this agent's split of the concurrency target in flight, replacing each
// finished request at once. The target changes only at the schedule's steps; lowering it lets
// requests finish without replacing them, it never cancels one.
import type { ClassStripe, Share } from '../../shared/shares.js';
import { sleepUntil } from '../timing.js';

/**
 * Runs the stripe's concurrency steps; resolves when the last step has passed and nothing is in
 * flight. `launch` sends one request and calls `done` once when it has ended.
 */
export async function runClosedLoop(
  stripe: ClassStripe,
  share: Share,
  nowNs: () => number,
  launch: (requestIndex: number, done: () => void) => void,
  signal: AbortSignal,
): Promise<void> {
  let target = 0;
  let inFlight = 0;
  let issued = 0;
  let drained: (() => void) | undefined;
  // Replace a finished request on the next turn, once undici has put the finished connection
  // back in its pool; replacing at once would open a new connection inside the next request's
  // TTFT. (A request that fails inside `launch` must not be replaced inside it either.)
  const replace = (): void => {
    inFlight--;
    fill();
    if (inFlight === 0) drained?.();
  };
  // One callback for every request (an open stream holds no closure or promise of its own).
  const done = (): void => void setImmediate(replace);
  const fill = (): void => {
    while (!signal.aborted && inFlight < target) {
      inFlight++;
      // Closed-loop indices interleave agents: the k-th request of agent i is k·N + i.
      launch(issued++ * share.count + share.index, done);
    }
  };
  for (const step of stripe.concurrency) {
    await sleepUntil(nowNs, step.atNs, signal);
    if (signal.aborted) break;
    target = step.value;
    fill();
  }
  target = 0;
  if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
}
