// The start barrier: pick an instant far enough ahead for every agent to hear of it and get
// ready, have each arm before it (through its channel), and abort before any load is sent if one
// does not.
import type { AgentChannel } from './channel.js';

/** Agents must report armed this long before the start instant. */
export const ARM_MARGIN_NS = 500_000_000n;
const MIN_LEAD_NS = 2_000_000_000n;

/** t_start = now + max(2 s, 5 × worst RTT, preparation time + arm margin) (distributed.md). */
export function chooseStartNs(nowNs: bigint, worstRttNs: number, worstPrepMs: number): bigint {
  const byRtt = BigInt(Math.ceil(5 * worstRttNs));
  const byPrep = BigInt(Math.ceil(worstPrepMs * 1e6)) + ARM_MARGIN_NS;
  const lead = [MIN_LEAD_NS, byRtt, byPrep].reduce((a, b) => (b > a ? b : a));
  return nowNs + lead;
}

/** Sends `arm` to every agent and resolves when all are armed; rejects naming the late ones. */
export async function armAll(channels: readonly AgentChannel[], deadlineMs: number): Promise<void> {
  const armed = await Promise.all(channels.map((ch) => ch.arm(ch.startLocalNs, deadlineMs)));
  const late = channels
    .filter((_, i) => !armed[i])
    .map((ch) => ch.id)
    .sort();
  if (late.length === 0) return;
  throw new Error(
    `agent${late.length > 1 ? 's' : ''} ${late.join(', ')} did not arm in time (the deadline was ${Number(ARM_MARGIN_NS) / 1e6} ms before the start instant)`,
  );
}
