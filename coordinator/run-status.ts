// A run's status policy, in one place: what makes a run aborted, degraded or completed, and the
// reason it gives. Pure; the run (coordinator/run/) gathers the facts, run.json writes the outcome.
//
//   aborted   a stop the run could not recover from (an agent failed, too many agents lost, the
//             user interrupted, agents never armed, clock refusal)
//   degraded  the run finished, but something it states makes its numbers weaker: a clock
//             fallback, an agent lost within --max-agent-loss, a link outage, a spool handed over
//             after the fact, start skew above --max-start-skew-ms, more failed requests than the
//             plan's max_error_share, or a client that could not keep up (client_health,
//             client-health.ts)
//   completed none of those

import type { ClientHealth } from '../figures/client-health.js';

export type RunStatus = 'completed' | 'degraded' | 'aborted';

/** Max minus min of the agents' first-send errors (null when no agent sent). */
export function startSkewNs(firstSendErrorsNs: readonly (number | null)[]): number | null {
  const starts = firstSendErrorsNs.filter((x): x is number => x !== null);
  return starts.length > 0 ? Math.max(...starts) - Math.min(...starts) : null;
}

/**
 * What losing one more agent means, decided the moment it is lost: the run stops when more agents
 * are lost than it may lose (`budget`: --max-agent-loss less those the fleet already lacked).
 */
export function agentLoss(
  id: string,
  why: string,
  lost: number,
  budget: number,
  maxAgentLoss: number,
): { stop: true; reason: string } | { stop: false; reason: string } {
  const missing = maxAgentLoss - budget;
  const already = missing > 0 ? ` (the fleet already lacked ${missing})` : '';
  if (lost > budget)
    return { stop: true, reason: `agent ${id} was lost (${why}); ${lost} lost${already} > --max-agent-loss ${maxAgentLoss}` };
  return { stop: false, reason: `agent ${id} was lost (${why}); within --max-agent-loss ${maxAgentLoss}, the others ran on` };
}

/** The facts a run's status follows from. */
export interface RunFacts {
  /** Why the run stopped early, if it did. */
  abortReason: string | null;
  /** What happened during the run that weakens it, in order (clock fallback, losses within budget, outages, spools handed over). */
  events: readonly string[];
  startSkewNs: number | null;
  maxStartSkewNs: number;
  /** Requests attempted and failed, and the plan's max_error_share. */
  attempted: number;
  failed: number;
  maxErrorShare: number;
  health: Pick<ClientHealth, 'client_limited' | 'reasons'>;
}

/** The run's status and its reasons, most decisive first. */
export function decideRunStatus(f: RunFacts): { status: RunStatus; reasons: string[] } {
  const reasons: string[] = [];
  if (f.abortReason) reasons.push(f.abortReason);
  reasons.push(...f.events);
  if (f.startSkewNs !== null && f.startSkewNs > f.maxStartSkewNs)
    reasons.push(`start skew ${(f.startSkewNs / 1e6).toFixed(3)} ms > --max-start-skew-ms ${f.maxStartSkewNs / 1e6}`);
  if (f.attempted > 0 && f.failed / f.attempted > f.maxErrorShare)
    reasons.push(
      `${f.failed} of ${f.attempted} requests failed (${pct(f.failed / f.attempted)} > max_error_share ${pct(f.maxErrorShare)})`,
    );
  if (f.health.client_limited) reasons.push(`client limited: ${f.health.reasons.join('; ')}`);
  const status: RunStatus = f.abortReason ? 'aborted' : reasons.length > 0 ? 'degraded' : 'completed';
  return { status, reasons };
}

function pct(x: number): string {
  return `${(x * 100).toFixed(2)}%`;
}
