// The start barrier: pick an instant far enough ahead for every agent to hear of it and get
// ready, have each arm before it, and abort before any load is sent if one does not.
import type { AgentConn } from './server.js';

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
export function armAll(agents: readonly AgentConn[], startLocalNs: (a: AgentConn) => bigint, deadlineMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const waiting = new Set(agents);
    const offs: (() => void)[] = [];
    const timer = setTimeout(
      () => {
        for (const off of offs) off();
        const late = [...waiting]
          .map((a) => a.hello.agent_id)
          .sort()
          .join(', ');
        reject(
          new Error(
            `agent${waiting.size > 1 ? 's' : ''} ${late} did not arm in time (the deadline was ${Number(ARM_MARGIN_NS) / 1e6} ms before the start instant)`,
          ),
        );
      },
      Math.max(0, deadlineMs),
    );
    for (const a of agents) {
      offs.push(
        a.onMessage((m) => {
          if (m.type !== 'armed') return;
          waiting.delete(a);
          if (waiting.size === 0) {
            clearTimeout(timer);
            for (const off of offs) off();
            resolve();
          }
        }),
      );
      a.send({ type: 'arm', start_local_ns: startLocalNs(a) });
    }
  });
}
