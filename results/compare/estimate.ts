// Pure: a side's estimate of a figure from its runs' time-ordered series: one run → the stationary
// block bootstrap of its requests, block length chosen from the data (Politis–White); two or more
// runs → runs resampled, then blocks within each drawn run (two levels).
import type { Rng } from '../../shared/rng.js';
import { type Dependence, dependence, ranks } from './block-length.js';
import { blockMeans, blockQuantiles, nearestRank, twoLevel, variance } from './bootstrap.js';
import type { SideEstimate } from './inference.js';
import { oneRunEstimate, repeatsEstimate } from './inference.js';

/** The most lags the correlation time is read over: bounds the cost at O(n · 1,000) for long runs. */
export const MAX_TAU_LAG = 1000;

/**
 * A series' block length (Politis–White) and correlation time. The correlation time is read over
 * lags up to n/4 (at most MAX_TAU_LAG), not only Politis–White's √n + 5, since a slow queue's
 * correlation reaches further.
 */
export function dependenceOf(series: ArrayLike<number>): Dependence {
  const lags = Math.min(MAX_TAU_LAG, Math.floor(series.length / 4));
  return { blockLen: dependence(series).blockLen, tau: dependence(series, lags).tau };
}

/** Of a latency series: read by rank, failures (+∞) last. */
export function latencyDependence(series: ArrayLike<number>): Dependence {
  return dependenceOf(ranks(series));
}

/** Per quantile in qs (ascending), the side's estimate; null when a run has no value. */
export function quantileSides(runs: readonly Float64Array[], qs: readonly number[], resamples: number, rng: Rng): (SideEstimate | null)[] {
  if (runs.length === 0 || runs.some((s) => s.length === 0)) return qs.map(() => null);
  const perRun = runs.map((s) => {
    const sorted = Float64Array.from(s).sort();
    const { blockLen, tau } = latencyDependence(s);
    return {
      n: s.length,
      blockLen,
      tau,
      figures: qs.map((q) => nearestRank(sorted, q)!),
      reps: blockQuantiles(s, qs, resamples, blockLen, rng),
    };
  });
  return qs.map((_, qi) => {
    if (perRun.length === 1) {
      const r = perRun[0]!;
      return oneRunEstimate('quantile', r.figures[qi]!, r.reps[qi]!, r.n, r.blockLen, r.tau);
    }
    const figures = perRun.map((r) => r.figures[qi]!);
    const within = perRun.map((r) => variance(r.reps[qi]!));
    return repeatsEstimate(
      figures,
      within,
      twoLevel(
        perRun.map((r, i) => ({ figure: figures[i]!, replicates: r.reps[qi]! })),
        resamples,
        rng,
      ),
      perRun,
    );
  });
}

/** The side's estimate of scale × the mean of each run's series (a share, or a rate per request); null when a run is empty. */
export function meanSide(runs: readonly { series: Float64Array; scale: number }[], resamples: number, rng: Rng): SideEstimate | null {
  if (runs.length === 0 || runs.some((r) => r.series.length === 0)) return null;
  const perRun = runs.map(({ series, scale }) => {
    const { blockLen, tau } = dependenceOf(series);
    let s = 0;
    for (const v of series) s += v;
    const reps = blockMeans(series, resamples, blockLen, rng).map((x) => x * scale);
    return { n: series.length, blockLen, tau, figure: (s / series.length) * scale, reps };
  });
  if (perRun.length === 1)
    return oneRunEstimate('mean', perRun[0]!.figure, perRun[0]!.reps, perRun[0]!.n, perRun[0]!.blockLen, perRun[0]!.tau);
  const figures = perRun.map((r) => r.figure);
  const within = perRun.map((r) => variance(r.reps));
  return repeatsEstimate(
    figures,
    within,
    twoLevel(
      perRun.map((r) => ({ figure: r.figure, replicates: r.reps })),
      resamples,
      rng,
    ),
    perRun,
  );
}

/** The side's estimate of a figure known only per run (no within-run replicates, e.g. ITL from histograms); needs 2+ runs. */
export function perRunSide(figures: readonly number[], resamples: number, rng: Rng): SideEstimate | null {
  if (figures.length < 2) return null;
  return repeatsEstimate(
    figures,
    [0],
    twoLevel(
      figures.map((figure) => ({ figure, replicates: null })),
      resamples,
      rng,
    ),
  );
}
