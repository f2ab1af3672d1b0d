// Measures an agent's clock against the coordinator's with NTP-style four-timestamp probes, sent
// one after another so no probe queues behind another, and agents probed one at a time (a few at a
// time in fleets of hundreds or more: probeLanes) so the coordinator's own event loop (which stamps
// T4) is as idle as it gets.
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

/** Agents per concurrently probed agent at join: up to this many, one agent at a time. */
export const AGENTS_PER_PROBE_LANE = 64;
/** The most agents probed at once (a large fleet). */
export const MAX_PROBE_LANES = 128;

/**
 * How many agents are probed at once: one for fleets of up to AGENTS_PER_PROBE_LANE agents, then
 * one more per as many again, at most MAX_PROBE_LANES. One at a time, 32 probes each, a fleet of
 * 10,000 agents took longer than the join timeout (the synthetic-fleet bench); a few at a time
 * keep the event loop that stamps T4 nearly idle, and each agent's offset_uncertainty_ns (half its
 * kept round trip) shows what the sharing cost.
 */
export function probeLanes(agents: number): number {
  return Math.min(MAX_PROBE_LANES, Math.max(1, Math.ceil(agents / AGENTS_PER_PROBE_LANE)));
}

/** Probes every agent, probeLanes(n) agents at a time (each agent's probes one after another). */
export async function probeAll(agents: readonly AgentConn[], clock: Clock): Promise<OffsetEstimate[]> {
  const out = new Array<OffsetEstimate>(agents.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < agents.length) {
      const i = next++;
      out[i] = await probeAgent(agents[i]!, clock);
    }
  };
  await Promise.all(Array.from({ length: probeLanes(agents.length) }, lane));
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
      resolve({
        t1: m.t1_ns,
        t2: m.t2_ns,
        t3: m.t3_ns,
        t4,
        ...(m.clock_correction_ns !== undefined && { correctionNs: m.clock_correction_ns }),
      });
    });
    agent.send({ type: 'probe', seq, t1_ns: clock.nowNs() });
  });
}
