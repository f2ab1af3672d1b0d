// Pure: one answer, everywhere a latency percentile meets failed requests (the SLO verdict, the
// abort rule, the live view): a failed request got no answer at any latency, so it ranks +∞, above
// every measured value. Some successful requests carry no value of a metric (TPOT of a 1-token
// output, TTFT without a content token); they are left out of the ranking. Whether the failures
// alone decide a percentile is judged over every request, those unmeasured successes included:
// only then is the answer the same whatever the unmeasured requests would have carried.
import { nearestRankIndex } from '../shared/histogram.js';

/** Counts of one population of requests for one latency metric. */
export interface RankCounts {
  /** Every request judged: measured successes, successes without the metric, failures. */
  requests: number;
  /** Failed requests (any status but ok), each ranked +∞. */
  failed: number;
  /** Successful requests that carry the metric. */
  measured: number;
}

/** How the nearest-rank q-quantile of a population with failures ranked +∞ comes out. */
export type FailureRank =
  /** No request: nothing to rank. */
  | { kind: 'empty' }
  /** Failures alone put the quantile on +∞ whatever the other requests carried: a latency bound is missed. */
  | { kind: 'failures_decide' }
  /** The quantile falls on a measured success: its 1-based rank among the measured values. */
  | { kind: 'measured'; rank: number }
  /**
   * The quantile of the ranked requests (measured + failed) falls on a failure, or nothing was
   * measured, but the failures do not decide it over every request: the successes without the
   * metric do, so it cannot be judged.
   */
  | { kind: 'unmeasured_decide' };

/**
 * Whether `failed` of `requests` requests, ranked +∞, hold the nearest-rank q-quantile whatever the
 * others carry: more than requests − ceil(q·requests) of them failed (for the p95, more than 5%).
 */
export function failuresDecide(failed: number, requests: number, q = 0.95): boolean {
  return requests > 0 && failed >= requests - nearestRankIndex(requests, q);
}

/** Where the nearest-rank q-quantile falls with failures ranked +∞ (see FailureRank). */
export function failureRank(c: RankCounts, q = 0.95): FailureRank {
  if (c.requests === 0) return { kind: 'empty' };
  if (failuresDecide(c.failed, c.requests, q)) return { kind: 'failures_decide' };
  const ranked = c.measured + c.failed;
  if (c.measured === 0) return { kind: 'unmeasured_decide' };
  const rank = nearestRankIndex(ranked, q) + 1;
  return rank <= c.measured ? { kind: 'measured', rank } : { kind: 'unmeasured_decide' };
}
