// Pure: turns the collector's merged histograms and exact counts into run.json's per-class,
// per-window figures, the metric population, and the histograms' measured error vs exact.

import { exactQuantile } from '../figures/exact/rank-select.js';
import { goodputFigures } from '../figures/goodput.js';
import { classVerdict } from '../figures/slo-verdict.js';
import type { WindowStats } from '../figures/window-stats.js';
import { EXACT_METRICS } from '../figures/window-stats.js';
import { apiMetrics, batchedApi, classApi, metricApplies } from '../shared/api-kinds.js';
import type { Histogram } from '../shared/histogram.js';
import { HISTOGRAM_CONFIG, percentilesNs, REPORTED_QUANTILES, summarizeMs } from '../shared/histogram.js';
import { FROM_INTENDED_METRICS, LATENCY_METRICS } from '../shared/metrics.js';
import type { ApiKind, Plan, TrafficClass } from '../shared/plan.js';
import { isClosedLoop } from '../shared/plan.js';
import type { RunJsonClass, RunJsonHistograms, RunJsonPopulation } from '../shared/run-schema.js';
import type { Collector } from './collector.js';

/** Below this many samples a p99 is descriptive only (domain.md §3). */
export const P99_MIN_SAMPLES = 100;

/** Figures of one class in one window: the `{metrics}` object of run.json. */
export type WindowMetrics = Record<string, number | boolean | null | Record<string, number>>;

/** run.json's `classes` section. */
export function classSummaries(plan: Plan, c: Collector, runSeconds: number): Record<string, RunJsonClass> {
  const out: Record<string, RunJsonClass> = {};
  for (const cls of plan.classes) {
    const byWindow = c.stats.get(cls.name)!;
    const all = byWindow.get('all')!;
    const windows: Record<string, WindowMetrics> = {};
    for (const [name, stats] of byWindow) {
      const w = plan.windows?.find((x) => x.name === name);
      const lengthS = w ? w.end_s - w.start_s : runSeconds;
      windows[name] = windowMetrics(cls, stats, (m) => c.mergedHistogram(cls.name, name, m), lengthS, classApi(cls, plan.target));
    }
    out[cls.name] = {
      requests: all.requests,
      completed: all.completed,
      failed: all.failed,
      http_200: all.http200,
      http_429: all.http429,
      status_counts: all.httpCounts,
      outcome_counts: all.statusCounts,
      closed_loop: isClosedLoop(cls),
      // The answer first: whether the declared SLO held, per window (absent without an SLO).
      ...(cls.slo && { slo_verdict: classVerdict(cls.slo, byWindow) }),
      windows,
    };
  }
  return out;
}

function windowMetrics(
  cls: TrafficClass,
  s: WindowStats,
  hist: (metric: string) => Histogram,
  lengthS: number,
  api: ApiKind,
): WindowMetrics {
  const out: WindowMetrics = {};
  for (const m of LATENCY_METRICS) {
    if (FROM_INTENDED_METRICS.includes(m) && isClosedLoop(cls)) continue; // no intended time in a closed loop
    if (!metricApplies(api, m)) continue; // absent, not empty: metric_population.not_applicable says why
    const d = summarizeMs(hist(m));
    for (const [k, v] of Object.entries(d)) out[`${m}_${k}`] = v;
  }
  const tpotP50 = out.tpot_p50_ms as number | null;
  out.decode_tok_s_p50 = tpotP50 ? round3(1000 / tpotP50) : null;
  out.throughput_tok_s = lengthS > 0 ? round3(s.completionTokens / lengthS) : null;
  out.throughput_rps = lengthS > 0 ? round3(s.finishedInside / lengthS) : null;
  if (batchedApi(api)) Object.assign(out, embeddingsFigures(s, lengthS));
  out.requests = s.requests;
  out.completed = s.completed;
  out.failed = s.failed;
  out.http_200 = s.http200;
  out.http_429 = s.http429;
  if (cls.slo) {
    out.slo_attainment = s.requests > 0 ? round6(s.sloHits / s.requests) : null;
    Object.assign(out, goodputFigures(s.goodInside, lengthS));
  }
  return out;
}

/** One sentence per embeddings figure of a window (classes.<c>.windows.<w>.*). */
export const EMBEDDINGS_DEFINITIONS: Record<string, string> = {
  inputs: 'embeddings and rerank classes: the inputs (texts embedded; rerank: documents scored) of the successful requests of the window',
  input_tokens:
    "embeddings and rerank classes: the prompt tokens of those requests, from the server's usage (rerank: total_tokens, every (query, document) pair as the server scored it)",
  inputs_per_s: 'inputs divided by the window length in seconds (the whole run, drain included, for window all)',
  input_tokens_per_s: 'input_tokens divided by the window length in seconds',
  mean_batch_size: 'inputs / completed: the mean inputs per successful request (each request carries prompt.batch_size)',
};

function embeddingsFigures(s: WindowStats, lengthS: number): WindowMetrics {
  return {
    inputs: s.inputs,
    input_tokens: s.promptTokens,
    inputs_per_s: lengthS > 0 ? round3(s.inputs / lengthS) : null,
    input_tokens_per_s: lengthS > 0 ? round3(s.promptTokens / lengthS) : null,
    mean_batch_size: s.completed > 0 ? round3(s.inputs / s.completed) : null,
  };
}

/** The largest relative gap between merged-HDR and exact nearest-rank percentiles (and min/max). */
export function maxRelativeErrorVsExact(plan: Plan, c: Collector): { max: number | null; compared: number } {
  let max: number | null = null;
  let compared = 0;
  for (const cls of plan.classes) {
    for (const [w, stats] of c.stats.get(cls.name)!) {
      for (const m of EXACT_METRICS) {
        const s = stats.exact.get(m);
        if (!s) continue;
        const h = c.mergedHistogram(cls.name, w, m);
        const hdr = percentilesNs(h, [...REPORTED_QUANTILES, 0, 1]);
        const exact = [...REPORTED_QUANTILES.map((q) => exactQuantile(s, q)), s.min, s.max];
        hdr.forEach((v, i) => {
          const e = exact[i]!;
          // Values below 1 µs are compared absolutely: their relative error is dominated by ns rounding.
          const rel = Math.abs(v - e) / Math.max(Math.abs(e), 1000);
          max = max === null ? rel : Math.max(max, rel);
          compared++;
        });
      }
    }
  }
  return { max: max === null ? null : Number((max as number).toPrecision(4)), compared };
}

/** One sentence per field of run.json's `histograms` section on how the exact figures were computed. */
export const EXACT_METHOD_DEFINITIONS: Record<string, string> = {
  'histograms.exact_values':
    'raw metric values (ns) the exact figures rest on: one per request, metric computable from its record (all but itl) and window it belongs to',
  'histograms.exact_method':
    'how the exact nearest-rank figures (max_relative_error_vs_exact, slo_verdict figures, the schedule lag p99 and max of data_quality, the sessions TTFTs by turn and the time to first tool call) were found over every raw value (exact_values also holds, per SLO latency bound of a window, one value per ranked request, a failed one as +∞, and those sessions and tool-call times): "in-memory sort" when at most 4 Mi values were held, else "streamed selection", an exact radix selection over a spill file of every value (the same figures, never estimated)',
  'histograms.exact_passes': 'sequential passes over the spill file the streamed selection took (0 with in-memory sort)',
};

/** run.json's `histograms` section. */
export function histogramSection(plan: Plan, c: Collector): RunJsonHistograms {
  const err = maxRelativeErrorVsExact(plan, c);
  const exact = c.exactMethod();
  return {
    lowest_ns: HISTOGRAM_CONFIG.lowest_ns,
    highest_ns: HISTOGRAM_CONFIG.highest_ns,
    significant_digits: HISTOGRAM_CONFIG.significant_digits,
    merge: 'hdr-add',
    max_relative_error_vs_exact: err.max,
    compared_values: err.compared,
    exact_values: exact.values,
    exact_method: exact.method,
    exact_passes: exact.passes,
    definition:
      'max_relative_error_vs_exact is the largest |merged-HDR − exact| / max(exact, 1 µs) over p50, p90, p95, p99, min and max of every class, window and metric computable from raw records (all but itl), exact being nearest rank over every raw value (exact_method says how it was found).',
  };
}

/** run.json's `metric_population` section. */
export function metricPopulation(plan: Plan, c: Collector): RunJsonPopulation {
  let attempted = 0;
  let successful = 0;
  let smallestP99Samples = Number.POSITIVE_INFINITY;
  const excludedByStatus: Record<string, number> = {};
  for (const cls of plan.classes) {
    const all = c.stats.get(cls.name)!.get('all')!;
    attempted += all.requests;
    successful += all.completed;
    for (const [status, n] of Object.entries(all.statusCounts))
      if (status !== 'ok') excludedByStatus[status] = (excludedByStatus[status] ?? 0) + n;
    for (const stats of c.stats.get(cls.name)!.values())
      if (stats.completed > 0) smallestP99Samples = Math.min(smallestP99Samples, stats.completed);
  }
  const notApplicable: Record<string, { metrics: string[]; why: string }> = {};
  for (const cls of plan.classes) {
    const api = apiMetrics(classApi(cls, plan.target));
    if (api.notApplicable.length > 0) notApplicable[cls.name] = { metrics: [...api.notApplicable], why: api.note };
  }
  return {
    attempted_requests: attempted,
    successful_requests: successful,
    ...(Object.keys(notApplicable).length > 0 && { not_applicable: notApplicable }),
    performance_eligible_requests: successful,
    excluded_requests: attempted - successful,
    excluded_by_status: excludedByStatus,
    failure_policy:
      'failed or contract-invalid responses keep their timing and metadata in requests.ndjson but are excluded from latency distributions (schedule_lag alone counts every dispatched request)',
    p99_interpretation: smallestP99Samples < P99_MIN_SAMPLES ? 'descriptive-nearest-rank-only' : 'nearest-rank',
    p99_minimum_recommended_samples: P99_MIN_SAMPLES,
  };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
