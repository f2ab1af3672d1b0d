// The one table of SLO bounds a plan may declare per class. A new percentile or bound is one row
// here: the plan's slo keys (plan-schema.ts), the verdict (figures/slo-verdict.ts), the exact ranks
// kept for it (figures/exact/), per-request goodput, the validity gates, the abort rule, compare's
// figures and gating, the live view, the report and the Benchmark Report all read this table,
// through slo-bounds.ts. Only data here, so a test can stand a longer table in its place.

/** The latency a bound judges (TTFT on the SLO's basis: from the actual or the intended send). */
export type BoundedLatency = 'ttft' | 'tpot' | 'e2e';

/** One latency bound: a quantile of a latency, over every request of a window, failures ranked +∞. */
export interface LatencyBound {
  /** The plan's slo key and the criterion's name in run.json: `<metric>_<label>_ms`. */
  readonly key: string;
  readonly metric: BoundedLatency;
  /** The quantile judged, in (0, 1). */
  readonly quantile: number;
  /** For people: "p95 TTFT". */
  readonly words: string;
  /** The plan schema's sentence. */
  readonly description: string;
}

/** The latency bounds, in the order criteria are listed. */
export const SLO_LATENCY_BOUNDS = [
  {
    key: 'ttft_p95_ms',
    metric: 'ttft',
    quantile: 0.95,
    words: 'p95 TTFT',
    description: 'p95 time to first token, ms, over every request of a window with failures ranked +∞ (on slo.basis).',
  },
  {
    key: 'tpot_p95_ms',
    metric: 'tpot',
    quantile: 0.95,
    words: 'p95 TPOT',
    description: 'p95 time per output token after the first, ms, over every request of a window with failures ranked +∞.',
  },
  {
    key: 'e2e_p95_ms',
    metric: 'e2e',
    quantile: 0.95,
    words: 'p95 e2e',
    description: 'p95 end-to-end latency, ms, over every request of a window with failures ranked +∞.',
  },
] as const satisfies readonly LatencyBound[];
