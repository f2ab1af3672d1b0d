// Pure: percentile-bootstrap intervals for the change of a figure between two sides (baseline,
// candidate). Over requests, each side's values are resampled with replacement at their own size
// and the figure recomputed; over repeats, each side's per-run figures are resampled and averaged.
// The interval is the (1 − confidence)/2 and (1 + confidence)/2 quantiles of the resampled changes.
// Seeded (shared/rng.ts), so the same inputs give the same interval on every machine.
import type { Rng } from '../../shared/rng.js';

/** A closed interval of the change (candidate − baseline), in the figure's unit. */
export interface Interval {
  low: number;
  high: number;
}

/** The nearest-rank q-quantile of values sorted ascending (the rank run.json uses); null without values. */
export function nearestRank(sorted: ArrayLike<number>, q: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  return sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!;
}

/**
 * `resamples` bootstrap replicates of the nearest-rank quantiles `qs` of a sorted sample, one
 * Float64Array per quantile. A resample of a sorted sample is a multiset of its indices, so its
 * k-th smallest value is the value at the k-th smallest drawn index: counting draws per index and
 * scanning once gives every quantile in O(n) per resample, never a sort.
 */
export function resampledQuantiles(sorted: ArrayLike<number>, qs: readonly number[], resamples: number, rng: Rng): Float64Array[] {
  const n = sorted.length;
  const out = qs.map(() => new Float64Array(resamples));
  if (n === 0) return out;
  const counts = new Uint32Array(n);
  const ranks = qs.map((q) => Math.min(n, Math.max(1, Math.ceil(q * n))));
  for (let b = 0; b < resamples; b++) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[Math.floor(rng.next() * n)]!++;
    let cum = 0;
    let qi = 0;
    // qs ascend, so their ranks do too: one scan finds them all.
    for (let idx = 0; idx < n && qi < ranks.length; idx++) {
      cum += counts[idx]!;
      while (qi < ranks.length && cum >= ranks[qi]!) out[qi++]![b] = sorted[idx]!;
    }
  }
  return out;
}

/** `resamples` bootstrap replicates of how many of n trials succeeded, `hits` of them having succeeded. */
export function resampledCounts(hits: number, n: number, resamples: number, rng: Rng): Float64Array {
  const out = new Float64Array(resamples);
  if (n === 0) return out;
  const p = hits / n;
  for (let b = 0; b < resamples; b++) {
    let c = 0;
    for (let i = 0; i < n; i++) if (rng.next() < p) c++;
    out[b] = c;
  }
  return out;
}

/** `resamples` bootstrap replicates of the mean of per-run figures. */
export function resampledMeans(values: readonly number[], resamples: number, rng: Rng): Float64Array {
  const out = new Float64Array(resamples);
  const n = values.length;
  if (n === 0) return out;
  for (let b = 0; b < resamples; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += values[Math.floor(rng.next() * n)]!;
    out[b] = s / n;
  }
  return out;
}

/** The percentile interval of candidate − baseline replicates (paired by index; the sides were resampled independently). */
export function differenceInterval(baseline: Float64Array, candidate: Float64Array, confidence: number): Interval {
  const d = new Float64Array(baseline.length);
  for (let i = 0; i < d.length; i++) d[i] = candidate[i]! - baseline[i]!;
  d.sort();
  const tail = (1 - confidence) / 2;
  return { low: nearestRank(d, tail)!, high: nearestRank(d, 1 - tail)! };
}

export function mean(values: readonly number[]): number {
  return values.reduce((s, v) => s + v, 0) / values.length;
}
