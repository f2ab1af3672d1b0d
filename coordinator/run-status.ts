// A run's status policy, in one place: what makes a run aborted, degraded or completed, and the
// reason it gives. Pure; the run (coordinator/run/) gathers the facts, run.json writes the outcome.
//
//   aborted   a stop the run could not recover from (an agent failed, too many agents lost, the
//             user interrupted, agents never armed, clock refusal)
//   degraded  the run finished, but something it states makes its numbers weaker: a clock
//             fallback, an agent lost within --max-agent-loss, a link outage, a spool handed over
//             after the fact, start skew above --max-start-skew-ms, more failed requests than the
//             plan's max_error_share, or a client that could not keep up (client_health)
//   completed none of those

import type { AgentHealth } from '../shared/protocol.js';

export type RunStatus = 'completed' | 'degraded' | 'aborted';

/** An agent whose schedule lag p99 exceeds this could not keep its schedule. */
export const CLIENT_LAG_P99_LIMIT_MS = 50;
/** An agent whose event-loop delay p99 exceeds this was too busy to time requests well. */
export const CLIENT_EVENT_LOOP_P99_LIMIT_MS = 50;
/** An agent whose event loop was busy more than this share of the run had no headroom left. */
export const CLIENT_ELU_LIMIT = 0.95;
/**
 * A class's first-token stamps may be late by their timing uncertainty (agent/loop-busy.ts); its
 * p99 may not exceed this share of the class's TTFT p50 …
 */
export const CLIENT_TTFT_UNCERTAINTY_SHARE = 0.1;
/**
 * … nor this floor (ms): the same bound as the event-loop delay's. On a shared 2-core machine a
 * quiet agent's p99 already reaches 5–15 ms (measured), so a lower floor would call most short
 * runs against a fast simulator client-limited.
 */
export const CLIENT_TTFT_UNCERTAINTY_FLOOR_MS = CLIENT_EVENT_LOOP_P99_LIMIT_MS;

/** One class's TTFT timing uncertainty and the TTFT it qualifies. */
export interface ClassTiming {
  name: string;
  ttft_uncertainty_p99_ms: number | null;
  ttft_p50_ms: number | null;
}

/** run.json `client_health`. */
export interface ClientHealth {
  client_limited: boolean;
  reasons: string[];
  schedule_lag_p99_ms: number | null;
  event_loop_delay_p99_ms: number | null;
  /** The largest class TTFT timing-uncertainty p99. */
  ttft_uncertainty_p99_ms: number | null;
  /** The lowest coverage of that estimate any agent measured in its self-test (null: none measured). */
  ttft_uncertainty_coverage?: number | null;
  limits: Record<string, number>;
  definition: string;
}

/**
 * Whether any agent's own health says it could not keep up, or any class's first-token stamps
 * may be late by too much of its TTFT, with the worst figures.
 */
export function clientHealth(
  agents: readonly { id: string; health: AgentHealth | null }[],
  classes: readonly ClassTiming[] = [],
  /** The lowest share of stamp errors the uncertainty covered in the agents' self-tests, when measured. */
  uncertaintyCoverage: number | null = null,
): ClientHealth {
  const reasons: string[] = [];
  let lag: number | null = null;
  let eld: number | null = null;
  for (const { id, health: h } of agents) {
    if (!h) continue;
    if (h.schedule_lag_p99_ms !== null) lag = Math.max(lag ?? 0, h.schedule_lag_p99_ms);
    eld = Math.max(eld ?? 0, h.event_loop_delay_p99_ms);
    if ((h.schedule_lag_p99_ms ?? 0) > CLIENT_LAG_P99_LIMIT_MS)
      reasons.push(`${id} schedule lag p99 ${h.schedule_lag_p99_ms} ms > ${CLIENT_LAG_P99_LIMIT_MS} ms`);
    if (h.event_loop_delay_p99_ms > CLIENT_EVENT_LOOP_P99_LIMIT_MS)
      reasons.push(`${id} event-loop delay p99 ${h.event_loop_delay_p99_ms} ms > ${CLIENT_EVENT_LOOP_P99_LIMIT_MS} ms`);
    if ((h.elu ?? 0) > CLIENT_ELU_LIMIT)
      reasons.push(`${id} event-loop utilisation ${(h.elu! * 100).toFixed(1)}% > ${CLIENT_ELU_LIMIT * 100}%`);
  }
  let uncertainty: number | null = null;
  for (const c of classes) {
    const u = c.ttft_uncertainty_p99_ms;
    if (u === null) continue;
    uncertainty = Math.max(uncertainty ?? 0, u);
    const limit = ttftUncertaintyLimitMs(c.ttft_p50_ms);
    if (u > limit)
      reasons.push(
        `class ${c.name} TTFT timing uncertainty p99 ${u} ms > ${limit} ms (the larger of ${CLIENT_TTFT_UNCERTAINTY_FLOOR_MS} ms and ${CLIENT_TTFT_UNCERTAINTY_SHARE * 100}% of its TTFT p50)${coverageNote(uncertaintyCoverage)}`,
      );
  }
  return {
    client_limited: reasons.length > 0,
    reasons,
    schedule_lag_p99_ms: lag,
    event_loop_delay_p99_ms: eld,
    ttft_uncertainty_p99_ms: uncertainty,
    ttft_uncertainty_coverage: uncertaintyCoverage,
    limits: {
      schedule_lag_p99_ms: CLIENT_LAG_P99_LIMIT_MS,
      event_loop_delay_p99_ms: CLIENT_EVENT_LOOP_P99_LIMIT_MS,
      event_loop_utilization: CLIENT_ELU_LIMIT,
      ttft_uncertainty_p99_share_of_ttft_p50: CLIENT_TTFT_UNCERTAINTY_SHARE,
      ttft_uncertainty_p99_floor_ms: CLIENT_TTFT_UNCERTAINTY_FLOOR_MS,
    },
    definition:
      "client_limited is true when any agent had a schedule lag p99, an event-loop delay p99 (how late a 10 ms timer fired, beyond its period) or an event-loop utilisation above the limits, or when a class had a TTFT timing-uncertainty p99 above the larger of the floor and the given share of its TTFT p50; the figures are the worst agent or class; the timing uncertainty is an estimate, not a bound: ttft_uncertainty_coverage is the lowest share of stamp errors (+ 0.5 ms) it covered in the agents' self-tests",
  };
}

// The uncertainty is an estimate (it misses the kernel's wake-up and time the process waited for a
// CPU): a reason that reads it says how often it covered the error where that was measured.
function coverageNote(coverage: number | null): string {
  return coverage === null
    ? ', an estimate whose coverage was not measured'
    : `, an estimate that covered ${(coverage * 100).toFixed(1)}% of stamp errors in the agents' self-tests`;
}

/** The largest TTFT timing-uncertainty p99 a class with this TTFT p50 tolerates (ms). */
export function ttftUncertaintyLimitMs(ttftP50Ms: number | null): number {
  return Math.max(CLIENT_TTFT_UNCERTAINTY_FLOOR_MS, Math.round(CLIENT_TTFT_UNCERTAINTY_SHARE * (ttftP50Ms ?? 0) * 1e3) / 1e3);
}

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
