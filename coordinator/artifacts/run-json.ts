// run.json (`loadfleet.run/v1`): the aligned, merged result, self-describing (every figure has
// its definition in `timing_methodology` or beside it), written atomically.

import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { ClassShape } from '../../figures/class-shape.js';
import type { ClassTiming } from '../../figures/client-health.js';
import { clientHealth, ttftUncertaintyLimitMs } from '../../figures/client-health.js';
import { promptExactness } from '../../figures/prompt-exactness.js';
import { serverBlock } from '../../figures/server/server-block.js';
import type { ScrapeSummary } from '../../figures/server/summary.js';
import { runSummaryLines } from '../../results/run-summary.js';
import { writeFileAtomic } from '../../shared/atomic-file.js';
import { stringifyExact } from '../../shared/json.js';
import { TIMING_METHODOLOGY } from '../../shared/metrics.js';
import type { Plan } from '../../shared/plan.js';
import { PLAN_DEFAULTS } from '../../shared/plan.js';
import type { GlobalSchedule } from '../../shared/schedule.js';
import { scheduleSha256 } from '../../shared/schedule.js';
import { parseSelfTest } from '../../shared/self-test.js';
import { shareLabel, shareSegment } from '../../shared/shares.js';
import type { AgentState } from '../agent-state.js';
import type { CacheReset } from '../cache-reset.js';
import { clockResidualEntries, driftFields, OFFSET_MODEL } from '../clock/drift-fields.js';
import type { ClockDecision } from '../clock/policy.js';
import type { Collector } from '../collector.js';
import { COST_DEFINITIONS, costSection } from '../cost/run-section.js';
import type { HeadroomReport } from '../headroom/index.js';
import type { Recovery } from '../journal/recovery.js';
import type { LocalLayout } from '../local-layout.js';
import { PROBES_AT_JOIN } from '../probe.js';
import type { RunStatus } from '../run-status.js';
import { decideRunStatus, startSkewNs } from '../run-status.js';
import { classSummaries, histogramSection, metricPopulation } from '../summary.js';
import type { ServerSpansSection } from '../traces/finish.js';
import { assessRun } from '../validity/index.js';
import { FIELD_DEFINITIONS } from './run-json-fields.js';

/** The run schema id. */
export const RUN_SCHEMA = 'loadfleet.run/v1';

/** Inputs of run.json. */
export interface RunJsonInput {
  dir: string;
  /** Set when a restarted coordinator recovered the run from its journal. */
  recovered?: Recovery;
  runId: string;
  plan: Plan;
  schedule: GlobalSchedule;
  collector: Collector;
  states: readonly AgentState[];
  startNs: bigint;
  finishedNs: bigint;
  decision: ClockDecision;
  coordinatorAnchorUncertaintyNs: number;
  abortReason: string | null;
  /** What happened during the run that makes it `degraded` (clock fallback, lost agents, outages); run-status.ts adds the rest. */
  runEvents: readonly string[];
  /** --max-start-skew-ms, in ns. */
  maxStartSkewNs: number;
  /** --clock-tolerance-ms in ns: the clock_residual check's limit for steered agents. */
  clockToleranceNs?: number;
  /** What the scraper recorded per source (empty when nothing was scraped). */
  scrapes?: ScrapeSummary;
  /** The run's declared flow-control expectation (slo_proof checks it only when present). */
  expectFlowControlEngaged?: boolean;
  /** The experiment, arm and repeat this run belongs to, if any. */
  experiment?: { name: string; arm: string; repeat: number };
  /** The headroom check made before any request (null: not made). */
  headroom?: HeadroomReport | null;
  /** What was done to the server's cache before the load. */
  cacheReset?: CacheReset;
  /** plan.traces: the server's spans joined to the requests. */
  serverSpans?: ServerSpansSection;
  /** How the coordinator laid its local agents out in processes (null: it spawned none). */
  localLayout?: LocalLayout | null;
}

// The run's agents grouped by the process that served them (same host, pid and process epoch):
// each agent's group size, and the groups of more than one. Linear in the agents, so a fleet of
// thousands (or a synthetic one, all in one process) stays a list of ids, not one per pair.
function agentProcesses(states: readonly AgentState[]): {
  sizeOf: Map<AgentState, number>;
  shared: { host: string; pid: number; agents: string[] }[];
} {
  const groups = new Map<string, AgentState[]>();
  for (const s of states) {
    const key = `${s.conn.hello.host}\u0000${s.conn.hello.pid}\u0000${s.conn.hello.epoch ?? ''}`;
    const group = groups.get(key);
    if (group) group.push(s);
    else groups.set(key, [s]);
  }
  const sizeOf = new Map<AgentState, number>();
  const shared: { host: string; pid: number; agents: string[] }[] = [];
  for (const group of groups.values()) {
    for (const s of group) sizeOf.set(s, group.length);
    if (group.length > 1)
      shared.push({ host: group[0]!.conn.hello.host, pid: group[0]!.conn.hello.pid, agents: group.map((s) => s.conn.hello.agent_id) });
  }
  return { sizeOf, shared };
}

// The lowest coverage of the stamp-uncertainty estimate the agents measured in their self-tests.
function lowestCoverage(states: readonly AgentState[]): number | null {
  const measured = states
    .map((s) => parseSelfTest(s.conn.hello.self_test)?.uncertainty_coverage ?? null)
    .filter((c): c is number => c !== null);
  return measured.length > 0 ? Math.min(...measured) : null;
}

/** Writes run.json; returns the status and a short human summary. */
export async function writeRunJson(input: RunJsonInput): Promise<{ status: RunStatus; summaryLines: string[] }> {
  const { collector: c, states } = input;
  // The parsed trace and dataset rows went to the agents; run.json names the files and their hashes instead.
  const { inputs, ...written } = input.plan;
  const { plan } = input;
  const runSeconds = Number(input.finishedNs - input.startNs) / 1e9;
  const classes = withTokenProvenance(plan, c, classSummaries(plan, c, runSeconds));
  for (const [name, tally] of c.loraTallies) Object.assign(classes[name] as object, { adapters: tally.summary() });
  for (const [name, tally] of c.toolTallies) Object.assign(classes[name] as object, { tool_calls: tally.summary() });
  const population: Record<string, unknown> = { ...metricPopulation(plan, c), output_token_sources: outputTokenSources(plan, c) };
  const attempted = population.attempted_requests as number;
  const failed = population.excluded_requests as number;
  const statusCounts: Record<string, number> = {};
  const errorCounts: Record<string, number> = {};
  for (const cls of plan.classes) {
    const all = c.stats.get(cls.name)!.get('all')!;
    for (const [status, n] of Object.entries(all.statusCounts)) if (status !== 'ok') errorCounts[status] = (errorCounts[status] ?? 0) + n;
  }
  for (const cls of plan.classes) {
    const all = c.stats.get(cls.name)!.get('all')!;
    for (const [code, n] of Object.entries(all.httpCounts)) statusCounts[code] = (statusCounts[code] ?? 0) + n;
  }
  const health = clientHealth(
    states.map((s) => ({
      id: s.conn.hello.agent_id,
      health: s.health,
      lag: c.ttftUncertainty.lagCount(s.index),
      uncertaintyMeasured: c.ttftUncertainty.agentCount(s.index),
      events: c.ttftUncertainty.eventsOf(s.index),
    })),
    plan.classes.map((cls) => classTiming(cls.name, classes[cls.name], c)),
    lowestCoverage(states),
  );
  const skewNs = startSkewNs(states.map((s) => s.firstSendErrorNs));
  const { status, reasons } = decideRunStatus({
    abortReason: input.abortReason,
    events: input.runEvents,
    startSkewNs: skewNs,
    maxStartSkewNs: input.maxStartSkewNs,
    attempted,
    failed,
    maxErrorShare: plan.max_error_share ?? PLAN_DEFAULTS.max_error_share,
    health,
  });
  // Sampled records: the offered schedule cannot be rebuilt from a sample (records.not_evaluable).
  const offered = c.sampleEvery === null ? offeredScheduleSha(input) : null;
  const processes = agentProcesses(states);
  const server = input.scrapes?.block() ?? serverBlock(plan, []);
  const gates = assessRun({
    plan,
    schedule: input.schedule,
    collector: c,
    classes,
    offeredScheduleSha256: offered,
    abortReason: input.abortReason,
    clientLimited: health.client_limited,
    clientReasons: health.reasons,
    lostAgents: states.filter((s) => s.lost).map((s) => s.conn.hello.agent_id),
    server,
    fairnessSeen: input.scrapes?.fairnessPriorities() ?? new Map(),
    ...(input.expectFlowControlEngaged === undefined ? {} : { expectFlowControlEngaged: input.expectFlowControlEngaged }),
    clockResiduals: clockResidualEntries(states, input.clockToleranceNs ?? 0),
    clockToleranceNs: input.clockToleranceNs ?? 0,
  });
  const run = {
    schema: RUN_SCHEMA,
    run_id: input.runId,
    ...(input.experiment && { experiment: input.experiment }),
    status,
    status_reason: reasons.length > 0 ? reasons.join('; ') : null,
    plan: written,
    plan_sha256: createHash('sha256').update(stringifyExact(written)).digest('hex'),
    schedule_sha256: input.schedule.sha256,
    offered_schedule_sha256: offered,
    offered_schedule_matches: c.sampleEvery === null ? offered === input.schedule.sha256 : null,
    records: recordsSection(c),
    ...(inputs && { workload_files: inputs.files }),
    ...(input.cacheReset && { cache_reset: input.cacheReset }),
    ...(input.serverSpans && { server_spans: input.serverSpans }),
    ...(c.sessionTurns.size > 0 && {
      sessions: Object.fromEntries([...c.sessionTurns].map(([name, t]) => [name, t.summary()])),
    }),
    started_at: new Date(Number(input.startNs / 1_000_000n)).toISOString(),
    finished_at: new Date(Number(input.finishedNs / 1_000_000n)).toISOString(),
    started_at_unix_ns: input.startNs,
    finished_at_unix_ns: input.finishedNs,
    wall_clock_ms: Math.round(runSeconds * 1e6) / 1e3,
    clock: {
      clock_domain_id: input.decision.domainId,
      alignment: input.decision.alignment,
      offset_model: OFFSET_MODEL,
      max_abs_offset_ns: Math.max(0, ...states.map((s) => Math.abs(s.offset.offset_ns))),
      max_offset_uncertainty_ns: Math.max(0, ...states.map((s) => s.offset.uncertainty_ns)),
      coordinator_anchor_uncertainty_ns: input.coordinatorAnchorUncertaintyNs,
      start_skew_ns: skewNs,
      definitions: {
        offset_ns: `agent clock minus coordinator clock, the median of the lowest-delay quarter of ${PROBES_AT_JOIN} NTP-style four-timestamp probes at the run's start (measured again for every run)`,
        offset_uncertainty_ns: 'half the largest round trip among the probes used: the bound on the offset error for any path asymmetry',
        start_skew_ns:
          'max minus min over agents of the delay between the shared start instant and the moment each agent began sending, each on its own clock',
        offset_model: 'how agent times were mapped onto the run timeline (agents[].start_offset_ns, requests.ndjson clock_correction_ns)',
      },
    },
    agents: states.map((s) => {
      const t = c.agentTotals.get(s.index) ?? { requests: 0, completed: 0, failed: 0 };
      return {
        agent_id: s.conn.hello.agent_id,
        host: s.conn.hello.host,
        remote: s.conn.remote,
        clock_domain_id: s.conn.hello.clock_domain_id,
        clock_domain_declared: s.conn.hello.clock_domain_declared,
        offset_ns: s.offset.offset_ns,
        offset_uncertainty_ns: s.offset.uncertainty_ns,
        clock_anchor_uncertainty_ns: s.conn.hello.clock_anchor_uncertainty_ns ?? null,
        rtt_ns: s.offset.rtt_ns,
        ...driftFields(s),
        workers: s.conn.hello.workers ?? 1,
        process_agents: processes.sizeOf.get(s) ?? 1,
        share: shareLabel({ index: s.index, count: states.length }),
        segment: shareSegment({ index: s.index, count: states.length }),
        first_send_error_ns: s.firstSendErrorNs,
        prep_ms: Math.round(s.prepMs * 1000) / 1000,
        warm_up: s.warmUp ?? null,
        requests: t.requests,
        completed: t.completed,
        failed: t.failed,
        schedule_lag_p99_ms: s.health?.schedule_lag_p99_ms ?? null,
        event_loop_delay_p99_ms: s.health?.event_loop_delay_p99_ms ?? null,
        cpu_ms: s.health?.cpu_ms ?? null,
        event_loop_utilization: s.health?.elu ?? null,
        ttft_uncertainty_p99_ms: c.ttftUncertainty.agentP99Ms(s.index),
        status: s.lost || s.terminated !== null ? 'lost' : 'ok',
        outages: s.outages,
        recovered_from_spool: s.recoveredRecords,
        self_test: parseSelfTest(s.conn.hello.self_test),
      };
    }),
    requests: attempted,
    completed: population.successful_requests,
    failed,
    status_counts: statusCounts,
    error_counts: errorCounts,
    classes,
    metric_population: population,
    ...(plan.classes.some((cls) => cls.prompt.canary) && canaryCounts(plan.classes.map((cls) => c.shapes.get(cls.name)!))),
    histograms: histogramSection(plan, c),
    client_health: health,
    duplicates_dropped: c.duplicatesDropped,
    intervals: {
      length_s: 1,
      written: c.intervalContributors.length,
      late: c.lateIntervals,
      duplicates: c.duplicateIntervals,
      contributors: c.intervalContributors,
    },
    server,
    headroom: input.headroom ?? null,
    local_layout: input.localLayout ?? null,
    ...(input.recovered && { recovered: input.recovered }),
    shared_processes: processes.shared,
    data_quality: gates.data_quality,
    slo_proof: gates.slo_proof,
    cost: costSection(plan, c, runSeconds),
    timing_methodology: TIMING_METHODOLOGY,
    field_definitions: { ...FIELD_DEFINITIONS, ...COST_DEFINITIONS },
  };
  await writeFileAtomic(join(input.dir, 'run.json'), `${stringifyExact(run, 2)}\n`);
  const lines = runSummaryLines({
    runId: input.runId,
    dir: input.dir,
    status: run.status,
    reason: run.status_reason,
    plan,
    classes,
    dataQuality: gates.data_quality,
    sloProof: gates.slo_proof,
    ...(input.serverSpans && { spans: input.serverSpans.classes }),
  });
  return { status, summaryLines: lines };
}

/** run.json's `records` section: what the coordinator received and what that means for the figures. */
function recordsSection(c: Collector): Record<string, unknown> {
  const received = c.recordsReceived;
  if (c.sampleEvery === null) return { sent: 'all', sample_every: null, received };
  return {
    sent: 'sampled',
    sample_every: c.sampleEvery,
    received,
    figures_over_sample: [
      'requests.ndjson',
      'classes.<c>.prompt_tokens_differ',
      'classes.<c>.output_token_sources',
      'classes.<c>.ttft_uncertainty_p99_ms',
      'agents[].ttft_uncertainty_p99_ms',
      'client_health (its TTFT uncertainty figures, per-request shares and stalls)',
      'metric_population.output_token_sources',
      'data_quality prompt and canary checks (every checked request is a sampled one)',
    ],
    not_evaluable: [
      'offered_schedule_sha256 (null) and offered_schedule_matches (null)',
      'histograms.max_relative_error_vs_exact (null: no raw values to compare with)',
    ],
  };
}

// Per class: how its prompts were sized and where its output counts came from.
function withTokenProvenance(plan: Plan, c: Collector, classes: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const cls of plan.classes) {
    const cal = plan.prompt_calibration?.[cls.name];
    out[cls.name] = {
      ...(classes[cls.name] as Record<string, unknown>),
      prompt_length_method: cal?.method ?? 'words-unverified',
      calibrated_prompt_tokens: cal?.counted_prompt_tokens ?? null,
      prompt_length_check: cal?.check ?? null,
      prompt_length_check_error: cal?.check_error ?? null,
      prompt_exactness: promptExactness(cal, c.shapes.get(cls.name)!.rows),
      prompt_tokens_differ: {
        requests: c.shapes.get(cls.name)!.promptDiffer,
        max_abs_difference: c.shapes.get(cls.name)!.promptMaxDifference,
      },
      output_token_sources: { ...c.shapes.get(cls.name)!.outputSources },
      ttft_uncertainty_p99_ms: c.ttftUncertainty.classP99Ms(cls.name),
      ...(cls.prompt.canary ? canaryCounts([c.shapes.get(cls.name)!]) : {}),
    };
  }
  return out;
}

// What the client-health policy needs of a class: its TTFT timing uncertainty, its TTFT p50 and
// how many of its stamps were uncertain by more than the limit that p50 sets.
function classTiming(name: string, summary: unknown, c: Collector): ClassTiming {
  const s = summary as { ttft_uncertainty_p99_ms: number | null; windows: { all?: { ttft_p50_ms?: number | null } } };
  const p50 = s.windows.all?.ttft_p50_ms ?? null;
  return {
    name,
    ttft_uncertainty_p99_ms: s.ttft_uncertainty_p99_ms,
    ttft_p50_ms: p50,
    ...c.ttftUncertainty.classCount(name, ttftUncertaintyLimitMs(p50)),
  };
}

function canaryCounts(shapes: readonly ClassShape[]): { request_canary_samples: number; request_canary_passed: number } {
  return {
    request_canary_samples: shapes.reduce((n, s) => n + s.canarySamples, 0),
    request_canary_passed: shapes.reduce((n, s) => n + s.canaryPassed, 0),
  };
}

function outputTokenSources(plan: Plan, c: Collector): Record<string, number> {
  const total: Record<string, number> = { usage: 0, tokenizer: 0, chunks: 0 };
  for (const cls of plan.classes) for (const [k, n] of Object.entries(c.shapes.get(cls.name)!.outputSources)) total[k]! += n;
  return total;
}

// The schedule hash recomputed from what the agents actually dispatched (their records); null
// when more requests of a class were dispatched off the plan than the coordinator keeps (offered-arrivals.ts).
function offeredScheduleSha(input: RunJsonInput): string | null {
  const sequences = input.schedule.classes.map((cls) => {
    const offered = input.collector.offeredArrivals(cls.className);
    return offered ? offered.sequence() : { length: 0, at: () => 0 };
  });
  if (sequences.some((s) => s === null)) return null;
  return scheduleSha256(input.schedule.classes, (cls) => sequences[input.schedule.classes.indexOf(cls)]!);
}
