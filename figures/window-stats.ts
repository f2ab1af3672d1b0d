// Exact per-(class, window) bookkeeping over raw records: counts, tokens, SLO hits, and the raw
// metric values that the merged histograms are checked against (handed to a sink, one series per
// metric, whose exact summaries come back once every record is in). Pure; no I/O.

import type { LatencyMetric, RequestRecord } from '../shared/metrics.js';
import { LATENCY_METRICS, metricNs } from '../shared/metrics.js';
import type { Slo } from '../shared/plan.js';
import { sloTtftMetric } from '../shared/plan.js';
import { meetsSlo, RecordTally } from '../shared/record-tally.js';
import { declaredBounds } from '../shared/slo-bounds.js';
import type { ExactSummary } from './exact/rank-select.js';
import type { ExactSink } from './exact/series-values.js';

/** Metrics that raw records determine exactly (ITL gaps are not in records). */
export const EXACT_METRICS = LATENCY_METRICS.filter((m): m is ExactMetric => m !== 'itl');

/** One of EXACT_METRICS. */
export type ExactMetric = Exclude<LatencyMetric, 'itl'>;

/** Counts of one class in one window (record-tally.ts), and the exact figures of its raw values. */
export class WindowStats extends RecordTally {
  /**
   * Per SLO latency bound, the exact figures over every request of the window with a failed
   * request ranked +∞ (the verdict's population), set by setExact; absent without values.
   */
  readonly verdictExact = new Map<VerdictMetric, ExactSummary>();
  /** Exact figures of each metric's raw values (ns), set once every record is in (setExact); absent without values. */
  readonly exact = new Map<ExactMetric, ExactSummary>();
  /** The sink's series of each of EXACT_METRICS, in that order. */
  private readonly series: number[];
  /** The sink's verdict series of each bounded metric of the SLO. */
  private readonly verdictSeries: [VerdictMetric, number][];

  constructor(
    startNs: number,
    endNs: number,
    slo: Slo | undefined,
    private readonly sink: ExactSink,
  ) {
    super(startNs, endNs, slo);
    this.series = EXACT_METRICS.map(() => sink.newSeries());
    this.verdictSeries = slo ? boundedMetrics(slo).map((m) => [m, sink.newSeries()]) : [];
  }

  /** The metrics the window's SLO bounds judge. */
  verdictMetrics(): VerdictMetric[] {
    return this.verdictSeries.map(([m]) => m);
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

  /** Adds one record's counts only (sampled records: no raw values, as for the other agents). */
  addCounts(r: RequestRecord): void {
    super.add(r);
  }

  /** Adds one record that belongs to this window: its counts and its raw values. */
  override add(r: RequestRecord): void {
    super.add(r);
    EXACT_METRICS.forEach((m, i) => {
      const v = metricNs(r, m);
      if (v !== null) this.sink.add(this.series[i]!, v);
    });
    // A failed request met no latency bound: it ranks above every measured value.
    for (const [m, series] of this.verdictSeries) {
      const v = r.status === 'ok' ? metricNs(r, m) : Number.POSITIVE_INFINITY;
      if (v !== null) this.sink.add(series, v);
    }
  }
}

/** A metric an SLO bound judges. */
export type VerdictMetric = 'ttft' | 'ttft_from_intended' | 'tpot' | 'e2e';

/** The metrics the SLO's latency bounds judge, in the order ttft, tpot, e2e. */
export function boundedMetrics(slo: Slo): VerdictMetric[] {
  // Each series once, however many bounds (quantiles) of the SLO table rank it.
  const metrics = declaredBounds(slo).map(({ row }) => (row.metric === 'ttft' ? sloTtftMetric(slo.basis) : row.metric));
  return (['ttft', 'ttft_from_intended', 'tpot', 'e2e'] as const).filter((m) => metrics.includes(m));
}

/** Whether one successful request met every per-request bound (record-tally.ts). */
export { meetsSlo };
