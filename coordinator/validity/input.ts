// Gathers what the validity gates read from the run's collector, schedule, summaries and scrapes
// into one plain ValidityInput, so the gates themselves stay pure and testable with known numbers.

import { exactQuantile } from '../../figures/exact/rank-select.js';
import { histogramRankSummary } from '../../figures/histogram-ranks.js';
import { promptExactness } from '../../figures/prompt-exactness.js';
import { classFairness } from '../../figures/server/server-block.js';
import type { ClassVerdict } from '../../figures/slo-verdict.js';
import type { ClassEvidence, ClockResidualEntry, SourceEvidence, ValidityInput, WindowEvidence } from '../../figures/validity/types.js';
import { apiMetrics, classApi } from '../../shared/api-kinds.js';
import { describeLength, isFixedLength } from '../../shared/lengths.js';
import type { Plan, TrafficClass } from '../../shared/plan.js';
import { isClosedLoop, TRACE_DEFAULTS } from '../../shared/plan.js';
import { impliedPrefixHits } from '../../shared/prefix-implied.js';
import type { GlobalSchedule } from '../../shared/schedule.js';
import { SLO_LATENCY_BOUNDS } from '../../shared/slo-bounds.js';
import type { Collector } from '../collector.js';

/** The run facts the gates need beyond the collector. */
export interface RunFacts {
  plan: Plan;
  schedule: GlobalSchedule;
  collector: Collector;
  /** run.json's `classes` section. */
  classes: Record<string, unknown>;
  offeredScheduleSha256: string | null;
  abortReason: string | null;
  clientLimited: boolean;
  clientReasons: string[];
  lostAgents: string[];
  /** run.json's `server` block, and fairness_id → priorities seen on the gateway's flow-control series. */
  server: { sources: unknown[]; windows: Record<string, unknown> };
  fairnessSeen: Map<string, Set<string>>;
  expectFlowControlEngaged?: boolean;
  clockResiduals?: ClockResidualEntry[];
  clockToleranceNs?: number;
}

/** The gates' input. */
export function validityInput(f: RunFacts): ValidityInput {
  const fairness = new Map(classFairness(f.plan).map((c) => [c.name, c.fairnessId]));
  const seen = f.fairnessSeen;
  return {
    classes: f.plan.classes.map((cls, i) => {
      const all = f.collector.stats.get(cls.name)!.get('all')!;
      const shape = f.collector.shapes.get(cls.name)!;
      // Sampled records: no raw lag of most requests here; the merged histogram holds every one.
      const lags =
        f.collector.sampleEvery === null
          ? all.exact.get('schedule_lag')
          : (histogramRankSummary(f.collector.mergedHistogram(cls.name, 'all', 'schedule_lag'), 0) ?? undefined);
      const summary = f.classes[cls.name] as { windows: Record<string, Record<string, unknown>>; slo_verdict?: ClassVerdict };
      const evidence: ClassEvidence = {
        name: cls.name,
        openLoop: !isClosedLoop(cls),
        planned: isClosedLoop(cls) ? null : f.schedule.classes[i]!.arrivalsNs.length,
        // Every record with an intended time, counted by the coordinator or (sampled) by the agents.
        dispatched: all.dispatched,
        statusCounts: all.statusCounts,
        httpCounts: all.httpCounts,
        scheduleLagP99Ms: lags ? round3(exactQuantile(lags, 0.99) / 1e6) : null,
        scheduleLagMaxMs: lags ? round3(lags.max / 1e6) : null,
        startSpreadMs: shape.startSpreadMs(),
        fairnessId: fairness.get(cls.name) ?? null,
        priority: cls.priority ?? null,
        // A distribution, dataset or trace has a target per request; its description stands here.
        inputTokens: isFixedLength(cls.prompt.input_tokens)
          ? cls.prompt.input_tokens
          : `each request's own (${describeLength(cls.prompt.input_tokens)})`,
        outputTokens: isFixedLength(cls.prompt.output_tokens)
          ? cls.prompt.output_tokens
          : cls.prompt.output_tokens === undefined && !apiMetrics(classApi(cls, f.plan.target)).streamed
            ? 'none (the API generates no tokens)'
            : `each request's own (${describeLength(cls.prompt.output_tokens)})`,
        generates: apiMetrics(classApi(cls, f.plan.target)).streamed,
        ignoreEos: cls.prompt.ignore_eos ?? true,
        cache: cls.load.model === 'trace' || cls.load.model === 'sessions' ? cls.load.model : (cls.prompt.cache ?? 'unique'),
        impliedPrefixHitTokens: f.collector.sessionTurns.get(cls.name)?.impliedHitTokens() ?? impliedHitsOf(f.plan, cls),
        ok: shape.ok,
        promptTokensMin: shape.promptTokensMin,
        promptTokensMax: shape.promptTokensMax,
        promptOutside: shape.promptOutside,
        promptUnreported: shape.promptUnreported,
        promptExactPlanned: shape.promptExactPlanned,
        promptDifferExact: shape.promptDifferExact,
        promptMaxDifference: shape.promptMaxDifference,
        promptOutsideInexact: shape.promptOutsideInexact,
        promptLengthCheck: f.plan.prompt_calibration?.[cls.name]?.check ?? null,
        promptLengthCheckError: f.plan.prompt_calibration?.[cls.name]?.check_error ?? null,
        promptExactness: promptExactness(f.plan.prompt_calibration?.[cls.name], shape.rows),
        promptLengthMethod: f.plan.prompt_calibration?.[cls.name]?.method ?? 'words-unverified',
        calibratedPromptTokens: f.plan.prompt_calibration?.[cls.name]?.counted_prompt_tokens ?? null,
        completionMismatch: shape.completionMismatch,
        outputSources: { ...shape.outputSources },
        requireUsage: f.plan.target?.require_usage ?? false,
        canary: cls.prompt.canary === true,
        canarySamples: shape.canarySamples,
        canaryPassed: shape.canaryPassed,
        http200NotOk: shape.http200NotOk,
        slo: cls.slo ?? null,
        sloVerdict: summary.slo_verdict ?? null,
        windows: Object.fromEntries(Object.entries(summary.windows).map(([w, m]) => [w, windowEvidence(m)])),
      };
      return evidence;
    }),
    scheduleSha256: f.schedule.sha256,
    offeredScheduleSha256: f.offeredScheduleSha256,
    ...(f.collector.sampleEvery !== null && {
      offeredScheduleNotEvaluable: `records were sampled (1 in ${f.collector.sampleEvery}): the offered schedule needs every request's intended time`,
    }),
    abortReason: f.abortReason,
    clientLimited: f.clientLimited,
    clientReasons: f.clientReasons,
    lostAgents: f.lostAgents,
    sources: f.server.sources as SourceEvidence[],
    server: (f.server.windows.all ?? {}) as Record<string, number | boolean | null>,
    fairnessPriorities: Object.fromEntries([...seen].map(([id, p]) => [id, [...p].sort()])),
    ...(f.expectFlowControlEngaged === undefined ? {} : { expectFlowControlEngaged: f.expectFlowControlEngaged }),
    ...(f.clockResiduals && f.clockResiduals.length > 0
      ? { clockResiduals: f.clockResiduals, clockToleranceNs: f.clockToleranceNs ?? 0 }
      : {}),
  };
}

function windowEvidence(m: Record<string, unknown>): WindowEvidence {
  const num = (k: string): number | null => (typeof m[k] === 'number' ? (m[k] as number) : null);
  return {
    requests: num('requests') ?? 0,
    completed: num('completed') ?? 0,
    slo_attainment: num('slo_attainment'),
    ttft_p95_ms: num('ttft_p95_ms'),
    tpot_p95_ms: num('tpot_p95_ms'),
    e2e_p95_ms: num('e2e_p95_ms'),
    bounds: Object.fromEntries(SLO_LATENCY_BOUNDS.map((b) => [b.key, num(b.key)])),
  };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

// What a trace class's rows imply for an unbounded 16-token-block prefix cache, in replay order.
function impliedHitsOf(plan: Plan, cls: TrafficClass): number | null {
  const rows = plan.inputs?.traces[cls.name];
  if (cls.load.model !== 'trace' || !rows) return null;
  return impliedPrefixHits(rows, cls.load.trace?.block_tokens ?? TRACE_DEFAULTS.block_tokens).hitTokens;
}
