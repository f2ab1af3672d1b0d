// Whether the target answered the agents before any load: each agent's warm-up (`GET /models`,
// agent/run.ts) comes back in its `prepared`. An agent that got no answer at all (refused, DNS,
// TLS, a timeout) cannot reach the target from where it runs; any HTTP status is an answer. More
// such agents than --max-agent-loss stop the run before any load, with each agent's error,
// instead of a run whose every request fails. Pure, so it is tested on its inputs.
import type { WarmUp } from '../../shared/protocol.js';

/** One agent's warm-up, as the run heard it (undefined from an agent too old to send one). */
export interface AgentWarmUp {
  agentId: string;
  host: string;
  warmUp: WarmUp | undefined;
}

export interface Reachability {
  /** One line per agent: what its warm-up got. */
  lines: string[];
  /** The agents that got no answer, each with its error. */
  unreachable: { agentId: string; host: string; error: string }[];
  /** Set when more agents than the loss budget got no answer: why the run stops. */
  refusal: string | null;
}

export function reachability(agents: readonly AgentWarmUp[], maxAgentLoss: number): Reachability {
  const lines: string[] = [];
  const unreachable: Reachability['unreachable'] = [];
  for (const a of agents) {
    const w = a.warmUp;
    if (!w) lines.push(`agent ${a.agentId}: no warm-up reported (an older agent)`);
    else if (w.status !== null) lines.push(`agent ${a.agentId}: target answered GET ${w.url}: HTTP ${w.status} in ${w.latency_ms} ms`);
    else {
      const error = w.error ?? 'no answer';
      lines.push(`agent ${a.agentId} (${a.host}): target NOT reached, GET ${w.url}: ${error} (after ${w.latency_ms} ms)`);
      unreachable.push({ agentId: a.agentId, host: a.host, error: `GET ${w.url}: ${error}` });
    }
  }
  const refusal =
    unreachable.length > maxAgentLoss
      ? `${unreachable.length} of ${agents.length} agents cannot reach the target (--max-agent-loss ${maxAgentLoss}): ${unreachable
          .map((u) => `${u.agentId}: ${u.error}`)
          .join('; ')}`
      : null;
  return { lines, unreachable, refusal };
}
