// Closed loop: keep this agent's split of the concurrency target in flight, replacing each
// finished request at once. The target changes only at the schedule's steps; lowering it lets
// requests finish without replacing them, it never cancels one.
import type { ClassStripe, Share } from '../../shared/shares.js';
import { sleepUntil } from '../timing.js';

/**
 * Requests started per event-loop turn; the rest start on the next turns, as in open-loop.ts.
 * Started all at once, a step to 10,000 streams held the loop for seconds (each start is a
 * connect and undici's pool search), with every open stream's reads waiting unstamped and the
 * link's heartbeats late enough for the coordinator to drop the agent.
 */
const MAX_STARTS_PER_TURN = 64;

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
  let fillPending = false;
  const fillLater = (): void => {
    fillPending = false;
    fill();
  };
  const fill = (): void => {
    for (let started = 0; !signal.aborted && inFlight < target; started++) {
      if (started === MAX_STARTS_PER_TURN) {
        if (!fillPending) setImmediate(fillLater);
        fillPending = true;
        return;
      }
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
