// sweep.json (`loadfleet.sweep-result/v1`): every stage's figures and verdict, then the capacity,
// its bracket, the knee and the answer; every figure is defined in `definitions`. Built purely,
// written atomically (after every stage, so an interrupted sweep keeps what it measured).
import { join } from 'node:path';
import type { StageCost } from '../../figures/cost/sweep-cost.js';
import { SWEEP_COST_DEFINITIONS, sweepPareto } from '../../figures/cost/sweep-cost.js';
import { writeFileAtomic } from '../../shared/atomic-file.js';
import { SWEEP_RESULT_SCHEMA, type SweepResultJson } from '../../shared/result-schemas.js';
import type { Sweep, SweepSlo } from '../../shared/sweep.js';
import type { Capacity, ClientAdvice, Knee } from './analysis.js';
import { answerOf, capacityOf, clientAdvice, kneeOf } from './analysis.js';
import type { StopRule, Verdict } from './strategy.js';
import { CLIENT_LIMITED_REMEASURES, scaleUnit } from './strategy.js';
import type { StageFigures } from './verdict.js';

export { SWEEP_RESULT_SCHEMA } from '../../shared/result-schemas.js';

/** One stage as sweep.json holds it. */
export interface StageRecord extends StageFigures {
  index: number;
  value: number;
  /** 1 for the value's first measurement, 2 and on for re-measures of a client-limited one. */
  measurement: number;
  verdict: Verdict;
  reasons: string[];
  reason: string;
  measure_window: { start_s: number; end_s: number };
  run_dir: string | null;
  /** The stage's budget figures (null: the stage did not run, or its run.json has none). */
  cost?: StageCost | null;
}

/** What the sweep knows when it writes sweep.json. */
export interface SweepState {
  sweepId: string;
  sweep: Sweep;
  sweepFile: string;
  planFile: string;
  background: string[];
  slo: SweepSlo;
  agents: number;
  startedAt: Date;
  finishedAt: Date | null;
  stages: StageRecord[];
  stop: { rule: StopRule; reason: string } | null;
  /** The coordinator process running the sweep (a restart takes up a running sweep only once it is gone). */
  coordinator: { host: string; pid: number };
  /** Stages a restarted coordinator found under way, and what it did with each. */
  resumed: ResumedStage[];
}

/** A stage a restarted coordinator found under way when it took the sweep up. */
export interface ResumedStage {
  stage_index: number;
  run_dir: string;
  /** recovered: completed from its journal; found_complete: its run had finished; rerun: nothing to recover, run again. */
  how: 'recovered' | 'found_complete' | 'rerun';
  down_from: string | null;
  restarted_at: string;
  outage_s: number | null;
}

function percentileDefinitions(metric: string, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of ['p50', 'p95', 'p99'])
    out[`stages[].${metric}_${p}_ms`] =
      `nearest-rank ${p} of ${what} over the requests of the scaled class in the measured window, each failed request ranked +∞ (null when the rank falls on a failure, listed in latency_on_failure; a success the metric is undefined on is not ranked), ms`;
  return out;
}

/** One sentence per figure. */
export const SWEEP_DEFINITIONS: Record<string, string> = {
  value:
    'the stage value of the scaled class: its arrival rate in req/s (scale "rate"), its concurrency (scale "concurrency") or its trace replay speed, × as recorded (scale "speed")',
  'stages[].offered_rps':
    'the arrival rate the stage asked of the scaled class (its value), req/s; for scale "speed" the trace rows its schedule put in the measured window per second; null for a closed loop',
  'stages[].offered_concurrency': 'the concurrency the stage asked of the scaled class; null for an open loop',
  'stages[].scheduled_rps':
    'requests of the scaled class whose intended (or, closed loop, sent) time fell in the measured window, per second of it',
  'stages[].offered_tok_s': 'offered_rps × the class output_tokens: the completion tokens per second the stage asked for',
  'stages[].achieved_rps':
    'successful requests of the scaled class that finished inside the measured window, whatever their arrival time (the departure rate, counted from requests.ndjson), per second of it',
  'stages[].achieved_tok_s': 'completion tokens of those same requests, per second of the measured window',
  'stages[].all_classes_rps': 'requests of every class the run dispatched, per second of its wall time (the client advice uses it)',
  ...percentileDefinitions('ttft', 'time to first token'),
  ...percentileDefinitions('tpot', 'time per output token after the first'),
  'stages[].index': 'the stage number in the order run, from 0',
  'stages[].latency_on_failure':
    'the stage latency figures (ttft_p95_ms, …) whose nearest rank falls on a failed request: +∞, written as null; read from the stage requests.ndjson, or, without it, when more than 1 − q of the window requests failed',
  'stages[].ttft_p95_successful_ms':
    'p95 TTFT (on the SLO basis) over the successful requests of the window only (run.json), for comparison',
  'stages[].tpot_p95_successful_ms': 'p95 TPOT over the successful requests of the window only (run.json), for comparison',
  'stages[].measurement':
    'which measurement of this value the stage is: 1 the first, 2 and on a re-measure after a client-limited one (at most client_limited_remeasures)',
  coordinator:
    'the host and process id of the coordinator running the sweep (the last one, when it was restarted); the same sweep command restarted on the same --out takes up a running sweep only once that process is gone',
  resumed:
    'one entry per stage a restarted coordinator found under way: its stage_index and run_dir, how (recovered: its run completed from its journal, the agents rejoining within their grace; found_complete: its run had finished before the stop; rerun: it had no journal, so the stage was run again in a new directory), down_from (the last write of its journal, ISO time), restarted_at and outage_s (between the two, s)',
  client_limited_remeasures:
    "how many times a client-limited stage is measured again at the same value before the sweep stops with stop_rule client_limited; a re-measure that passes or fails takes the stage's place",
  'stages[].client_limited_reasons':
    'run.json client_health.reasons of the stage run: which agent or class was over a limit, by what share (with its confidence), the worst second and what the records show there',
  'stages[].ttft_basis':
    'what the ttft_* figures of the stage measure from, the SLO basis: sent (ttft, from the actual send) or intended (ttft_from_intended, from the intended send, keeping any delay the client added)',
  'stages[].requests': 'requests of the scaled class whose intended (or sent) time fell in the measured window, every status',
  'stages[].completed': 'those of them that succeeded',
  'stages[].failed': 'those of them that failed (any status but ok)',
  'stages[].http_429': 'those of them answered 429',
  'stages[].agents': 'agents that ran the stage',
  'stages[].agent_health':
    'each agent that ran the stage: its id, host, worker threads, status (ok or lost), clock offset measured for this stage, and its own headroom figures (schedule-lag p99, event-loop delay p99, event-loop utilisation) that decide client_limited',
  'stages[].run_status': 'the stage run status from its run.json (completed, degraded, aborted; not_run when it could not start)',
  'stages[].reasons': 'every reason for the verdict; reason joins them',
  ignored_passes: 'passing values above a failing one: not believed, so not the capacity',
  'stages[].success_rate':
    'completed / requests of the scaled class in the measured window (429, 503, timeouts and every other failure count as misses)',
  'stages[].error_share': '1 − success_rate: the share the max_error_share stop rule is compared with',
  'stages[].slo_attainment':
    'share of the requests in the measured window that succeeded and met every per-request SLO bound (run.json slo_attainment)',
  'stages[].goodput_rps':
    'requests of the scaled class in the measured window that succeeded and met every per-request SLO bound (TTFT, TPOT, e2e as declared, each applied to the request itself), per second of the window (run.json goodput_rps), beside achieved_rps; it says how much useful work per second the stage served, while the verdict judges the window p95 against the SLO',
  'stages[].failures_by_status':
    'failed requests of the scaled class over the whole stage by outcome, and non-200 responses by HTTP status (http_<code>)',
  'stages[].server':
    'server signals over the measured window from run.json server.windows.measure (max running and waiting requests, max KV-cache use %, max pool saturation, max EPP queue); null when the run scraped nothing',
  'stages[].client_limited':
    "run.json client_health.client_limited: more than 1% of some agent's or class's requests (shown with 95% confidence) were sent late or stamped with too much uncertainty, or an agent's event loop was late or saturated through the run",
  'stages[].data_quality_valid':
    'run.json data_quality.valid of the stage run (every validity check passed; not_evaluated counts as not passed); reported, not used in the verdict',
  'stages[].slo_proof_valid': 'run.json slo_proof.valid of the stage run; reported, not used in the verdict',
  'stages[].failed_checks': 'names of the data_quality and slo_proof checks of the stage run whose status is fail',
  'stages[].client_limited_agents':
    'agents the run named as client-limited (run.json client_health.limited_agents), with their schedule-lag and event-loop-delay p99 and their dispatched req/s',
  'stages[].verdict':
    'pass: SLO met and (rate) achieved ≥ 90% of the arrivals offered in the window (a shortfall of at most 2 requests is counting noise at the window edges); a latency bound is missed when its p95 falls on a failed request (each failure ranks +∞); fail: otherwise, or the run was stopped by a plan abort rule (over capacity); client_limited: the client, not the server, shaped the stage figures (run.json client_health), so the stage says nothing about the server and is measured again; error: the run aborted otherwise',
  'stages[].measure_window':
    'the part of the stage judged: from the scaled phase start plus warmup_s to the end of the stage, seconds from the stage start',
  'stages[].measure_s': 'length of the measured window, s',
  'stages[].run_wall_s': 'the stage run from its shared start instant to its last request done',
  capacity: 'the highest passing value below every failing value (a pass above a fail is not believed); null when no stage passed',
  bracket: '[capacity, the lowest failing value above it]: the true capacity lies in between; either end is null when not measured',
  knee: 'over stages that measured throughput, sorted by value, elasticity = (Δachieved_rps / achieved_rps) / (Δoffered / offered) between neighbours (offered: scheduled_rps for a rate, the value for a concurrency); the knee is the value before the first elasticity below 0.5 (achieved throughput stops following the offered load); null if that never happened',
  client_advice:
    'for the first client-limited stage that no re-measure decided: ceiling = the lowest req/s of an agent limited there, agents_needed = ⌈all-classes req/s / (0.8 × ceiling)⌉ and at least one more than used',
};

/** The sweep.json document. */
export function sweepDocument(s: SweepState): SweepResultJson {
  const summaries = s.stages;
  const capacity: Capacity = capacityOf(summaries);
  const knee: Knee = kneeOf(summaries, s.sweep.scale);
  const advice: ClientAdvice | null = clientAdvice(summaries, s.sweep.scale);
  const stop = s.stop ?? { rule: 'interrupted' as StopRule, reason: 'the sweep is still running' };
  return {
    schema: SWEEP_RESULT_SCHEMA,
    sweep_id: s.sweepId,
    name: s.sweep.name,
    status:
      s.finishedAt === null
        ? 'running'
        : stop.rule === 'interrupted'
          ? 'interrupted'
          : stop.rule === 'endpoint_failed' || stop.rule === 'fleet_short'
            ? 'aborted'
            : 'completed',
    stop_rule: s.stop?.rule ?? null,
    stop_reason: s.stop?.reason ?? null,
    started_at: s.startedAt.toISOString(),
    finished_at: s.finishedAt?.toISOString() ?? null,
    sweep_file: s.sweepFile,
    plan_file: s.planFile,
    sweep: s.sweep,
    class: s.sweep.class,
    scale: s.sweep.scale,
    unit: scaleUnit(s.sweep.scale),
    background_classes: s.background,
    slo: s.slo,
    agents: s.agents,
    coordinator: s.coordinator,
    resumed: s.resumed,
    design:
      'each stage is its own run (under stages/) with its own engine state, schedule, clock checks and validity gates; the other classes keep their plan in every stage; only the measure window (after warmup_s) is judged',
    client_limited_remeasures: CLIENT_LIMITED_REMEASURES,
    stages: s.stages,
    capacity: capacity.capacity,
    bracket: capacity.bracket,
    ignored_passes: capacity.ignored_passes,
    knee,
    client_advice: advice,
    pareto: sweepPareto(s.stages, scaleUnit(s.sweep.scale)),
    answer: answerOf({
      cls: s.sweep.class,
      scale: s.sweep.scale,
      background: s.background,
      slo: s.slo,
      stages: summaries,
      capacity,
      knee,
      advice,
      stopRule: stop.rule,
      stopReason: stop.reason,
    }),
    definitions: { ...SWEEP_DEFINITIONS, ...SWEEP_COST_DEFINITIONS },
  };
}

/** Writes `<dir>/sweep.json` atomically; returns the document written. */
export async function writeSweepJson(dir: string, s: SweepState): Promise<SweepResultJson> {
  const doc = sweepDocument(s);
  await writeFileAtomic(join(dir, 'sweep.json'), `${JSON.stringify(doc, null, 2)}\n`);
  return doc;
}
