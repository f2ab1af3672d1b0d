// Pure: a stage's figures read out of its run.json, and its verdict. A stage passes when the scaled
// class met its SLO in the measured window (p95 TTFT, p95 TPOT, success rate — 429/503/timeouts
// count as misses) and, for a rate, achieved at least 90% of the offered throughput. A stage any
// agent could not drive honestly is `client_limited`: neither a pass nor a fail of the server.

import type { SloBasis } from '../../shared/plan.js';
import { sloTtftMetric } from '../../shared/plan.js';
import type { SweepScale, SweepSlo } from '../../shared/sweep.js';
import { SATURATION_RATIO } from '../../shared/sweep.js';
import { ABORT_RULE_PREFIX } from '../abort-rule.js';
import type { WindowLatencies } from './ranked-latency.js';
import { rankedQuantile } from './ranked-latency.js';
import type { Verdict } from './strategy.js';
import { fmt } from './strategy.js';

/** Signals the server reported in the measured window (run.json `server.windows.measure`), when scraped. */
export interface ServerSignals {
  max_vllm_running: number | null;
  max_vllm_waiting: number | null;
  max_vllm_kv_cache_usage_pct: number | null;
  max_pool_saturation: number | null;
  max_epp_queue: number | null;
}

/** An agent that could not keep its schedule in the stage. */
export interface LimitedAgent {
  agent_id: string;
  schedule_lag_p99_ms: number | null;
  event_loop_delay_p99_ms: number | null;
  /** Requests (every class) the agent dispatched per second of the run. */
  requests_per_s: number;
}

/** One agent's part in a stage: who it was and how much headroom it had. */
export interface AgentHeadroom {
  agent_id: string;
  host: string | null;
  workers: number;
  status: string;
  offset_ns: number | null;
  schedule_lag_p99_ms: number | null;
  event_loop_delay_p99_ms: number | null;
  event_loop_utilization: number | null;
}

/** Everything sweep.json says about one stage apart from its value, verdict and directory. */
export interface StageFigures {
  run_status: string;
  run_status_reason: string | null;
  agents: number;
  /** Every agent of the stage with its headroom figures (a client-limited stage is never capacity). */
  agent_health: AgentHeadroom[];
  run_wall_s: number | null;
  /** Length of the measured window, s. */
  measure_s: number;
  offered_rps: number | null;
  offered_concurrency: number | null;
  scheduled_rps: number | null;
  offered_tok_s: number | null;
  achieved_rps: number | null;
  achieved_tok_s: number | null;
  /** Requests per second of every class together over the run (for the client advice). */
  all_classes_rps: number | null;
  /** What TTFT is measured from here: the actual send, or the intended send (the SLO's basis). */
  ttft_basis: SloBasis;
  ttft_p50_ms: number | null;
  ttft_p95_ms: number | null;
  ttft_p99_ms: number | null;
  tpot_p50_ms: number | null;
  tpot_p95_ms: number | null;
  tpot_p99_ms: number | null;
  /** The figures above whose rank falls on a failed request (+∞, written as null). */
  latency_on_failure: string[];
  /** p95 TTFT and TPOT over the successful requests only (run.json), for the reasons. */
  ttft_p95_successful_ms: number | null;
  tpot_p95_successful_ms: number | null;
  requests: number;
  completed: number;
  failed: number;
  http_429: number;
  success_rate: number | null;
  error_share: number | null;
  slo_attainment: number | null;
  /** Requests of the measured window that succeeded and met every per-request SLO bound, per second (run.json goodput_rps). */
  goodput_rps: number | null;
  failures_by_status: Record<string, number>;
  server: ServerSignals | null;
  client_limited: boolean;
  client_limited_agents: LimitedAgent[];
  /** run.json client_health.reasons: which agent or class, which second, and what was seen. */
  client_limited_reasons: string[];
  /** run.json data_quality.valid and slo_proof.valid (null when the run has no such gate). */
  data_quality_valid: boolean | null;
  slo_proof_valid: boolean | null;
  /** Names of the gates' checks that failed (not_evaluated ones are not listed). */
  failed_checks: string[];
}

type Json = Record<string, unknown>;

/** The object at `v`, or an empty one: run.json is read defensively (a field another branch adds may be absent). */
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Reads a stage's figures from its parsed run.json. */
export function stageFigures(
  run: Json,
  cls: string,
  window: string,
  measure: { start_s: number; end_s: number },
  scale: SweepScale,
  value: number,
  outputTokens: number,
  departures: { requests: number; completionTokens: number } | null,
  basis: SloBasis = 'sent',
  /** The window's latencies from requests.ndjson (failures ranked +∞); null: run.json's successful-only figures, failures judged by their count. */
  latencies: WindowLatencies | null = null,
): StageFigures {
  const ttft = sloTtftMetric(basis);
  const c = obj(obj(run.classes)[cls]);
  const w = obj(obj(c.windows)[window]);
  const lengthS = measure.end_s - measure.start_s;
  const requests = num(w.requests) ?? 0;
  const completed = num(w.completed) ?? 0;
  const failed = num(w.failed) ?? 0;
  const wallMs = num(run.wall_clock_ms);
  const wallS = wallMs === null ? null : wallMs / 1000;
  const agents: Json[] = Array.isArray(run.agents) ? run.agents.map(obj) : [];
  const health = obj(run.client_health);
  const limits = obj(health.limits);
  const scheduledRps = lengthS > 0 ? round3(requests / lengthS) : null;
  // A trace's speed offers whatever rows fall in the window at that speed.
  const offeredRps = scale === 'rate' ? value : scale === 'speed' ? scheduledRps : null;
  const failures: Record<string, number> = {};
  for (const [k, n] of Object.entries(obj(c.outcome_counts))) if (k !== 'ok' && typeof n === 'number') failures[k] = n;
  for (const [k, n] of Object.entries(obj(c.status_counts))) if (k !== '200' && typeof n === 'number') failures[`http_${k}`] = n;
  return {
    run_status: String(run.status ?? 'unknown'),
    run_status_reason: typeof run.status_reason === 'string' ? run.status_reason : null,
    agents: agents.length,
    agent_health: agents.map((a) => ({
      agent_id: String(a.agent_id),
      host: typeof a.host === 'string' ? a.host : null,
      workers: num(a.workers) ?? 1,
      status: String(a.status ?? 'ok'),
      offset_ns: num(a.offset_ns),
      schedule_lag_p99_ms: num(a.schedule_lag_p99_ms),
      event_loop_delay_p99_ms: num(a.event_loop_delay_p99_ms),
      event_loop_utilization: num(a.event_loop_utilization),
    })),
    run_wall_s: wallS,
    measure_s: lengthS,
    offered_rps: offeredRps,
    offered_concurrency: scale === 'concurrency' ? value : null,
    scheduled_rps: scheduledRps,
    offered_tok_s: offeredRps === null ? null : round3(offeredRps * outputTokens),
    achieved_rps: departures && lengthS > 0 ? round3(departures.requests / lengthS) : num(w.throughput_rps),
    achieved_tok_s: departures && lengthS > 0 ? round3(departures.completionTokens / lengthS) : num(w.throughput_tok_s),
    all_classes_rps: wallS && wallS > 0 ? round3((num(run.requests) ?? 0) / wallS) : null,
    ttft_basis: basis,
    ...latencyFigures(w, ttft, latencies, requests, failed),
    requests,
    completed,
    failed,
    http_429: num(w.http_429) ?? 0,
    success_rate: requests > 0 ? round6(completed / requests) : null,
    error_share: requests > 0 ? round6(failed / requests) : null,
    slo_attainment: num(w.slo_attainment),
    goodput_rps: num(w.goodput_rps),
    failures_by_status: failures,
    server: serverSignals(obj(obj(run.server).windows)[window]),
    client_limited: health.client_limited === true,
    data_quality_valid: gateValid(run.data_quality),
    slo_proof_valid: gateValid(run.slo_proof),
    failed_checks: [run.data_quality, run.slo_proof].flatMap((g) =>
      (Array.isArray(obj(g).checks) ? (obj(g).checks as unknown[]) : [])
        .map(obj)
        .flatMap((c) => (c.status === 'fail' ? [String(c.name)] : [])),
    ),
    // The run names the agents its evidence limited (client-health.ts); a run.json written before
    // it did is read by the agents' own p99 figures against its limits.
    client_limited_agents: agents
      .filter((a) =>
        Array.isArray(health.limited_agents)
          ? health.limited_agents.includes(String(a.agent_id))
          : (num(a.schedule_lag_p99_ms) ?? 0) > (num(limits.schedule_lag_p99_ms) ?? 50) ||
            (num(a.event_loop_delay_p99_ms) ?? 0) > (num(limits.event_loop_delay_p99_ms) ?? 50) ||
            (num(a.event_loop_utilization) ?? 0) > (num(limits.event_loop_utilization) ?? 1),
      )
      .map((a) => ({
        agent_id: String(a.agent_id),
        schedule_lag_p99_ms: num(a.schedule_lag_p99_ms),
        event_loop_delay_p99_ms: num(a.event_loop_delay_p99_ms),
        requests_per_s: wallS && wallS > 0 ? round3((num(a.requests) ?? 0) / wallS) : 0,
      })),
    client_limited_reasons: Array.isArray(health.reasons) ? health.reasons.map(String) : [],
  };
}

const QUANTILES = [
  ['p50', 0.5],
  ['p95', 0.95],
  ['p99', 0.99],
] as const;

// TTFT and TPOT p50/p95/p99 with failures ranked +∞. Without the stage's records, run.json's
// successful-only figures stand and a quantile q falls on a failure when more than 1 − q of the
// window's requests failed.
function latencyFigures(
  w: Json,
  ttft: string,
  l: WindowLatencies | null,
  requests: number,
  failed: number,
): Pick<
  StageFigures,
  | 'ttft_p50_ms'
  | 'ttft_p95_ms'
  | 'ttft_p99_ms'
  | 'tpot_p50_ms'
  | 'tpot_p95_ms'
  | 'tpot_p99_ms'
  | 'latency_on_failure'
  | 'ttft_p95_successful_ms'
  | 'tpot_p95_successful_ms'
> {
  const out: Record<string, unknown> = {};
  const onFailure: string[] = [];
  for (const [metric, source, values] of [
    ['ttft', ttft, l?.ttftNs],
    ['tpot', 'tpot', l?.tpotNs],
  ] as const)
    for (const [p, q] of QUANTILES) {
      const key = `${metric}_${p}_ms`;
      const f = l
        ? rankedQuantile(values!, l.failed, q)
        : requests > 0 && failed / requests > 1 - q
          ? { ms: null, onFailure: true }
          : { ms: num(w[`${source}_${p}_ms`]), onFailure: false };
      out[key] = f.ms;
      if (f.onFailure) onFailure.push(key);
    }
  return {
    ...(out as Pick<StageFigures, 'ttft_p50_ms'>),
    latency_on_failure: onFailure,
    ttft_p95_successful_ms: num(w[`${ttft}_p95_ms`]),
    tpot_p95_successful_ms: num(w.tpot_p95_ms),
  } as ReturnType<typeof latencyFigures>;
}

function gateValid(g: unknown): boolean | null {
  const v = obj(g).valid;
  return typeof v === 'boolean' ? v : null;
}

function serverSignals(v: unknown): ServerSignals | null {
  if (typeof v !== 'object' || v === null) return null;
  const w = obj(v);
  return {
    max_vllm_running: num(w.max_vllm_running),
    max_vllm_waiting: num(w.max_vllm_waiting),
    max_vllm_kv_cache_usage_pct: num(w.max_vllm_kv_cache_usage_pct),
    max_pool_saturation: num(w.max_pool_saturation),
    max_epp_queue: num(w.max_epp_queue),
  };
}

/** A stage's verdict and every reason for it. */
export interface Judgement {
  verdict: Verdict;
  reasons: string[];
}

/** Judges a stage against the SLO and the saturation test. */
export function judgeStage(f: StageFigures, slo: SweepSlo): Judgement {
  // A plan abort rule stopped an overloaded stage early: that is the stage's answer (over capacity), not an error.
  if (f.run_status === 'aborted' && f.run_status_reason?.startsWith(ABORT_RULE_PREFIX))
    return { verdict: 'fail', reasons: [`over capacity, stopped early: ${f.run_status_reason}`] };
  if (f.run_status === 'aborted') return { verdict: 'error', reasons: [`the run aborted: ${f.run_status_reason ?? 'no reason given'}`] };
  // The run's own reasons name the agent or class, the second and what was seen there.
  if (f.client_limited)
    return {
      verdict: 'client_limited',
      reasons: [
        `client-limited: ${f.client_limited_reasons.length > 0 ? f.client_limited_reasons.join('; ') : 'see run.json client_health'}`,
      ],
    };
  // Nothing but refused connections: the endpoint is gone, which says nothing about its capacity.
  const connectErrors = f.failures_by_status.connect_error ?? 0;
  if (f.requests > 0 && f.completed === 0 && f.failed > 0 && connectErrors >= f.failed)
    return { verdict: 'error', reasons: [`the endpoint did not answer (${connectErrors} connect errors, nothing completed)`] };
  const reasons: string[] = [];
  if (f.requests === 0) return { verdict: 'fail', reasons: ['no request of the class fell in the measured window'] };
  // Failures count (as in the run's SLO verdict): each ranks +∞, so a p95 whose rank falls on one is a miss.
  const failedText = `${f.failed} of ${f.requests} failed, each ranked +∞`;
  for (const [key, label, successful] of [
    ['ttft_p95_ms', 'TTFT', f.ttft_p95_successful_ms],
    ['tpot_p95_ms', 'TPOT', f.tpot_p95_successful_ms],
  ] as const) {
    const bound = slo[key];
    if (bound === undefined) continue;
    const figure = f[key];
    if (f.latency_on_failure.includes(key))
      reasons.push(`p95 ${label} falls on a failed request (${failedText}; successful-only ${ms(successful)}) > SLO ${ms(bound)}`);
    else if (figure === null) reasons.push(`no successful request to measure p95 ${label} on`);
    else if (figure > bound)
      reasons.push(
        `p95 ${label}${label === 'TTFT' && f.ttft_basis === 'intended' ? ' from intended send' : ''} ${ms(figure)} > SLO ${ms(bound)}`,
      );
  }
  if (slo.success_rate_min !== undefined && f.success_rate !== null && f.success_rate < slo.success_rate_min)
    reasons.push(
      `success rate ${pct(f.success_rate)} < SLO ${pct(slo.success_rate_min)} (${f.failed} of ${f.requests} failed; 429/503/timeouts count as misses)`,
    );
  // Against the arrivals the schedule put in the window (a Poisson draw is not exactly the nominal rate).
  const offered = f.scheduled_rps ?? f.offered_rps;
  if (f.offered_rps !== null && offered !== null && f.achieved_rps !== null && saturated(offered, f.achieved_rps, f.measure_s))
    reasons.push(
      f.achieved_rps === 0
        ? `saturated: no request finished inside the measured window while ${fmt(offered)} req/s arrived in it`
        : `saturated: achieved ${fmt(f.achieved_rps)} req/s < ${SATURATION_RATIO * 100}% of the ${fmt(offered)} req/s offered in the window (${pct(f.achieved_rps / offered)})`,
    );
  return reasons.length > 0
    ? { verdict: 'fail', reasons }
    : { verdict: 'pass', reasons: ['met the SLO and achieved ≥ 90% of the offered throughput'] };
}

/** A shortfall of this many requests or fewer is counting noise: requests in flight across a window edge. */
export const SATURATION_NOISE_REQUESTS = 2;

/** Achieved below 90% of offered, by more than the counting noise of a short window. */
export function saturated(offeredRps: number, achievedRps: number, windowS: number): boolean {
  // Rates carry 3 decimals, so the shortfall is rounded back to whole requests first.
  return achievedRps < SATURATION_RATIO * offeredRps && Math.round((offeredRps - achievedRps) * windowS) > SATURATION_NOISE_REQUESTS;
}

function ms(x: number | null): string {
  return x === null ? '-' : `${Math.round(x * 10) / 10} ms`;
}

function pct(x: number): string {
  return `${(Math.round(x * 1000) / 10).toFixed(1)}%`;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
