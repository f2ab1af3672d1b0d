// Exact per-(class, window) bookkeeping over raw records: counts, tokens, SLO hits, and the raw
// metric values that the merged histograms are checked against (handed to a sink, one series per
// metric, whose exact summaries come back once every record is in). Pure; no I/O.

import type { LatencyMetric, RequestRecord } from '../shared/metrics.js';
import { EXACT_OUTPUT_SOURCES, LATENCY_METRICS, metricNs } from '../shared/metrics.js';
import type { Slo } from '../shared/plan.js';
import { sloTtftMetric } from '../shared/plan.js';
import type { ExactSummary } from './exact/rank-select.js';
import type { ExactSink } from './exact/series-values.js';

/** Metrics that raw records determine exactly (ITL gaps are not in records). */
export const EXACT_METRICS = LATENCY_METRICS.filter((m): m is ExactMetric => m !== 'itl');

/** One of EXACT_METRICS. */
export type ExactMetric = Exclude<LatencyMetric, 'itl'>;

/** Counts of one class in one window, and the exact figures of its raw values. */
export class WindowStats {
  requests = 0;
  completed = 0;
  failed = 0;
  http200 = 0;
  http429 = 0;
  completionTokens = 0;
  /** Embeddings: inputs and prompt tokens of the successful requests. */
  inputs = 0;
  promptTokens = 0;
  /** Successful requests that finished inside the window (for throughput_rps). */
  finishedInside = 0;
  /** Successful requests that met every per-request bound (slo_attainment). */
  sloHits = 0;
  /** Of sloHits, those that finished inside the window: goodput, on throughput_rps's basis. */
  goodInside = 0;
  /** Successful requests without a first content token (their TTFT is unmeasurable). */
  okWithoutFirstToken = 0;
  /** Successful requests whose output count is not exact (chunk estimate or none): no TPOT. */
  okUncountedOutput = 0;
  /** Successful requests with exactly one counted output token: no TPOT (no gap to divide). */
  okOneToken = 0;
  /**
   * Per SLO latency bound, the exact figures over every request of the window with a failed
   * request ranked +∞ (the verdict's population), set by setExact; absent without values.
   */
  readonly verdictExact = new Map<VerdictMetric, ExactSummary>();
  /** Request outcomes (ok, http_error, timeout, …). */
  readonly statusCounts: Record<string, number> = {};
  /** HTTP status codes ("none" when no response arrived). */
  readonly httpCounts: Record<string, number> = {};
  /** Exact figures of each metric's raw values (ns), set once every record is in (setExact); absent without values. */
  readonly exact = new Map<ExactMetric, ExactSummary>();
  /** The sink's series of each of EXACT_METRICS, in that order. */
  private readonly series: number[];
  /** The sink's verdict series of each bounded metric of the SLO. */
  private readonly verdictSeries: [VerdictMetric, number][];

  constructor(
    private readonly startNs: number,
    private readonly endNs: number,
    private readonly slo: Slo | undefined,
    private readonly sink: ExactSink,
  ) {
    this.series = EXACT_METRICS.map(() => sink.newSeries());
    this.verdictSeries = slo ? boundedMetrics(slo).map((m) => [m, sink.newSeries()]) : [];
  }

  /** Takes the exact figures of its series from the summaries of every series of the sink. */
  setExact(summaries: readonly (ExactSummary | null)[]): void {
    EXACT_METRICS.forEach((m, i) => {
      const s = summaries[this.series[i]!];
      if (s) this.exact.set(m, s);
    });
    for (const [m, series] of this.verdictSeries) {
      const s = summaries[series];
      if (s) this.verdictExact.set(m, s);
    }
  }

  /** Adds one record that belongs to this window. */
  add(r: RequestRecord): void {
    this.requests++;
    this.statusCounts[r.status] = (this.statusCounts[r.status] ?? 0) + 1;
    const http = r.http_status === null ? 'none' : String(r.http_status);
    this.httpCounts[http] = (this.httpCounts[http] ?? 0) + 1;
    if (r.http_status === 200) this.http200++;
    if (r.http_status === 429) this.http429++;
    EXACT_METRICS.forEach((m, i) => {
      const v = metricNs(r, m);
      if (v !== null) this.sink.add(this.series[i]!, v);
    });
    if (r.status !== 'ok') {
      this.failed++;
      // A failed request met no latency bound: it ranks above every measured value.
      for (const [, series] of this.verdictSeries) this.sink.add(series, Number.POSITIVE_INFINITY);
      return;
    }
    this.completed++;
    this.completionTokens += r.completion_tokens ?? 0;
    this.inputs += r.inputs ?? 0;
    this.promptTokens += r.prompt_tokens ?? 0;
    if (r.first_content_ns === null) this.okWithoutFirstToken++;
    const counted = r.output_token_source !== null && EXACT_OUTPUT_SOURCES.includes(r.output_token_source);
    if (!counted) this.okUncountedOutput++;
    else if ((r.completion_tokens ?? 0) < 2) this.okOneToken++;
    for (const [m, series] of this.verdictSeries) {
      const v = metricNs(r, m);
      if (v !== null) this.sink.add(series, v);
    }
    const inside = r.done_ns !== null && r.done_ns >= this.startNs && r.done_ns < this.endNs;
    if (inside) this.finishedInside++;
    if (this.slo && meetsSlo(r, this.slo)) {
      this.sloHits++;
      if (inside) this.goodInside++;
    }
  }
}

/** A metric an SLO bound judges. */
export type VerdictMetric = 'ttft' | 'ttft_from_intended' | 'tpot' | 'e2e';

/** The metrics the SLO's latency bounds judge, in the order ttft, tpot, e2e. */
export function boundedMetrics(slo: Slo): VerdictMetric[] {
  const out: VerdictMetric[] = [];
  if (slo.ttft_p95_ms !== undefined) out.push(sloTtftMetric(slo.basis));
  if (slo.tpot_p95_ms !== undefined) out.push('tpot');
  if (slo.e2e_p95_ms !== undefined) out.push('e2e');
  return out;
}

/**
 * Whether one successful request met every per-request bound its class declares (TTFT on the
 * SLO's basis). A bound the request cannot be measured on (TPOT of an output without two counted
 * tokens, TTFT of a response without a content token) is not held against it: as in vLLM's
 * goodput, a 1-token answer has no inter-token time to be too slow.
 */
export function meetsSlo(r: RequestRecord, slo: Slo): boolean {
  const within = (metric: ExactMetric, boundMs: number | undefined): boolean => {
    if (boundMs === undefined) return true;
    const v = metricNs(r, metric);
    return v === null || v <= boundMs * 1e6;
  };
  return within(sloTtftMetric(slo.basis), slo.ttft_p95_ms) && within('tpot', slo.tpot_p95_ms) && within('e2e', slo.e2e_p95_ms);
}
