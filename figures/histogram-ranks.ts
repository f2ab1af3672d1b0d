// With sampled records (plan.records.sample_every) the coordinator holds no raw value of most
// requests, so an SLO verdict's p95 — nearest rank over every request of the window, each failed
// one ranked +∞ — is read from the merged run histogram of the successful requests' values (every
// request's, from every agent) and the failed count of the agents' tallies. Pure.
import type { Histogram } from '../shared/histogram.js';
import { valuesAtRanksNs } from '../shared/histogram.js';
import type { ExactSummary } from './exact/rank-select.js';
import { summaryRanks } from './exact/rank-select.js';

/**
 * The verdict population's summary from a histogram of the successful requests' values and the
 * number of failed requests ranked above them: the same ranks as an exact summary, a rank on a
 * successful request read as its bucket's median-equivalent value (within the histogram's
 * precision: 3 significant digits), a rank past them +∞; null when there is nothing to rank.
 */
export function histogramRankSummary(h: Histogram, failed: number): ExactSummary | null {
  const n = h.totalCount + failed;
  if (n === 0) return null;
  const ranks = summaryRanks(n);
  const values = valuesAtRanksNs(
    h,
    ranks.map((r) => r + 1),
  ).map((v, i) => (ranks[i]! >= h.totalCount ? Number.POSITIVE_INFINITY : v));
  return { count: n, min: values[0]!, max: values.at(-1)!, quantiles: values.slice(1, -1) };
}
