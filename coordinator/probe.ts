// Measures an agent's clock against the coordinator's with NTP-style four-timestamp probes, sent
// one after another so no probe queues behind another, and agents probed one at a time so the
// coordinator's own event loop (which stamps T4) is as idle as it gets.
import type { Clock, OffsetEstimate, ProbeSample } from '../shared/clock.js';
import { fitOffset } from '../shared/clock.js';
import type { AgentConn } from './server.js';

/** Probes per agent at join; the lowest-delay quarter is kept. */
export const PROBES_AT_JOIN = 32;
const PROBE_TIMEOUT_MS = 2000;

/** Sends `count` probes to `agent` and fits its offset (agent clock − coordinator clock). */
export async function probeAgent(agent: AgentConn, clock: Clock, count = PROBES_AT_JOIN): Promise<OffsetEstimate> {
  const samples: ProbeSample[] = [];
  for (let seq = 0; seq < count; seq++) samples.push(await probeOnce(agent, clock, seq));
  return fitOffset(samples, Math.max(1, Math.floor(count / 4)));
}

/** Probes every agent, one agent after another. */
export async function probeAll(agents: readonly AgentConn[], clock: Clock): Promise<OffsetEstimate[]> {
  const out: OffsetEstimate[] = [];
  for (const a of agents) out.push(await probeAgent(a, clock));
  return out;
}

/** One probe; resolves with its four timestamps. */
export function probeOnce(agent: AgentConn, clock: Clock, seq: number): Promise<ProbeSample> {
  return new Promise((resolve, reject) => {
    const fail = (why: string): void => {
      clearTimeout(timer);
      off();
      offClose();
      reject(new Error(`agent ${agent.hello.agent_id} ${why}`));
    };
    const timer = setTimeout(() => fail(`did not answer a clock probe within ${PROBE_TIMEOUT_MS} ms`), PROBE_TIMEOUT_MS);
    const offClose = agent.onClose(() => fail('closed its link during a clock probe'));
    const off = agent.onMessage((m) => {
      if (m.type !== 'probe_reply' || m.seq !== seq) return;
      const t4 = clock.nowNs();
      clearTimeout(timer);
      off();
      offClose();
      resolve({ t1: m.t1_ns, t2: m.t2_ns, t3: m.t3_ns, t4 });
    });
    agent.send({ type: 'probe', seq, t1_ns: clock.nowNs() });
  });
}
