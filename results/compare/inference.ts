// Pure: from each side's estimate to the test of the change of one figure, Holm's step-down over
// the gating figures, and the smallest change a test could detect. A side's figure is the mean over
// its runs of each run's figure; its variance comes from the block bootstrap of its one run
// (corrected for the block bootstrap's shortfall) or from the spread of its repeated runs. The
// change is tested with Welch's t; when failures rank +∞ inside the replicates, the percentile
// bootstrap is used instead.
import { mean, nearestRank, variance } from './bootstrap.js';
import { tCdf, tQuantile } from './tdist.js';

/** A side's figure with what its uncertainty is known from. */
export interface SideEstimate {
  /** The figure (mean over runs); +∞ when failures reach its rank. */
  point: number;
  /** Bootstrap replicates of point. */
  replicates: Float64Array;
  /** Variance of point; +∞ when some replicates are +∞. */
  variance: number;
  /** Degrees of freedom of variance. */
  df: number;
  /** Mean block length and correlation time (requests) over the side's runs; absent for figures read per run. */
  blockLen?: number;
  tau?: number;
  /** A run's correlation time reached MAX_SHORTFALL of its block length: the run is short for its own autocorrelation. */
  shortRun?: boolean;
}

/**
 * One run a side: block-bootstrap replicates over blocks of mean length blockLen of n requests whose
 * correlation time is tau. A block bootstrap's variance falls short of the truth by about tau /
 * blockLen of it (Politis and White's first-order bias), so it is divided by 1 − tau / blockLen
 * (restoring at most MAX_SHORTFALL). Degrees of freedom: for a mean, the number of blocks − 1 (as
 * in batch means); for a quantile, whose bootstrap variance is rougher (relative error of order
 * blocks^−1/4, Hall and Martin 1988), 2·√blocks.
 */
export function oneRunEstimate(
  kind: 'quantile' | 'mean',
  point: number,
  replicates: Float64Array,
  n: number,
  blockLen: number,
  tau: number,
): SideEstimate {
  const b = Math.max(1, blockLen);
  const blocks = n / b;
  return {
    point,
    replicates,
    variance: variance(replicates) / (1 - Math.min(MAX_SHORTFALL, tau / b)),
    df: Math.max(1, kind === 'quantile' ? 2 * Math.sqrt(blocks) : blocks - 1),
    blockLen,
    tau,
    shortRun: tau / b >= MAX_SHORTFALL,
  };
}

/** The largest share of a variance the first-order bias correction restores. */
export const MAX_SHORTFALL = 0.75;

/**
 * m ≥ 2 runs a side: the variance of the mean of the runs' figures is s² / m (s² their sample
 * variance, which holds run-to-run variation and each run's own noise alike: Kalibera and Jones's
 * parametric interval), with m − 1 degrees of freedom; never less than the runs' own mean
 * within-run variance / m, so two runs that happen to agree do not narrow it below what their own
 * noise allows. The replicates (runs, then blocks within runs) serve the percentile test when
 * failures make figures infinite.
 */
export function repeatsEstimate(
  figures: readonly number[],
  within: readonly number[],
  replicates: Float64Array,
  runs?: readonly { blockLen: number; tau: number }[],
): SideEstimate {
  const m = figures.length;
  const e: SideEstimate = { point: mean(figures), replicates, variance: Math.max(variance(figures), mean(within)) / m, df: m - 1 };
  if (!runs) return e;
  return {
    ...e,
    blockLen: mean(runs.map((r) => r.blockLen)),
    tau: mean(runs.map((r) => r.tau)),
    shortRun: runs.some((r) => r.tau / Math.max(1, r.blockLen) >= MAX_SHORTFALL),
  };
}

/** The test of candidate − baseline. */
export interface ChangeTest {
  /** candidate − baseline; null when both are +∞ (no finite change to state). */
  delta: number | null;
  /** Standard error of delta; null when not finite. */
  se: number | null;
  df: number;
  /** Two-sided interval of delta at the stated confidence; an end is null when unbounded. */
  interval: { low: number | null; high: number | null };
  /** One-sided bounds of delta at 1 − oneSided each (low: delta is above it; high: below it); an end is null when unbounded. */
  bound: { low: number | null; high: number | null };
  /** One-sided p-values of "the candidate is higher" and "lower". */
  pHigher: number;
  pLower: number;
  /** One-sided p-values of "the candidate is higher by more than margin.higher" and "lower by more than margin.lower" (margins 0: as above). */
  pHigherBeyond: number;
  pLowerBeyond: number;
}

/** a − b with +∞ − +∞ read as no change. */
function diff(a: number, b: number): number {
  return a === b ? 0 : a - b;
}

/**
 * The test of candidate − baseline, its two-sided interval at `confidence`, and the one-sided tests
 * of a change beyond a margin (≥ 0) each way: what one run a side must clear besides its own noise
 * (timing uncertainty and run-to-run floor, figures.ts). The margins may differ: a candidate reads
 * higher by its own late stamps, lower by the baseline's.
 */
export function testChange(
  b: SideEstimate,
  c: SideEstimate,
  confidence: number,
  margin: { higher: number; lower: number } = { higher: 0, lower: 0 },
  oneSided = (1 - confidence) / 2,
): ChangeTest {
  const d = diff(c.point, b.point);
  const v = b.variance + c.variance;
  const tail = (1 - confidence) / 2;
  if (Number.isFinite(d) && Number.isFinite(v)) {
    const df = v === 0 ? Number.POSITIVE_INFINITY : v ** 2 / (b.variance ** 2 / b.df + c.variance ** 2 / c.df);
    const se = Math.sqrt(v);
    if (se === 0) {
      return {
        delta: d,
        se,
        df,
        interval: { low: d, high: d },
        bound: { low: d, high: d },
        pHigher: d > 0 ? 0 : 1,
        pLower: d < 0 ? 0 : 1,
        pHigherBeyond: d > margin.higher ? 0 : 1,
        pLowerBeyond: d < -margin.lower ? 0 : 1,
      };
    }
    const half = tQuantile(1 - tail, df) * se;
    return {
      delta: d,
      se,
      df,
      interval: { low: d - half, high: d + half },
      bound: { low: d - tQuantile(1 - oneSided, df) * se, high: d + tQuantile(1 - oneSided, df) * se },
      pHigher: 1 - tCdf(d / se, df),
      pLower: tCdf(d / se, df),
      pHigherBeyond: 1 - tCdf((d - margin.higher) / se, df),
      pLowerBeyond: tCdf((d + margin.lower) / se, df),
    };
  }
  // Percentile bootstrap: replicates are paired by index (the sides were resampled independently).
  const n = Math.min(b.replicates.length, c.replicates.length);
  const diffs = new Float64Array(n);
  let atOrBelow = 0;
  let atOrAbove = 0;
  let withinAbove = 0;
  let withinBelow = 0;
  for (let i = 0; i < n; i++) {
    diffs[i] = diff(c.replicates[i]!, b.replicates[i]!);
    if (diffs[i]! <= 0) atOrBelow++;
    if (diffs[i]! >= 0) atOrAbove++;
    if (diffs[i]! <= margin.higher) withinAbove++;
    if (diffs[i]! >= -margin.lower) withinBelow++;
  }
  diffs.sort();
  const finite = (x: number | null) => (x !== null && Number.isFinite(x) ? x : null);
  return {
    delta: c.point === b.point && !Number.isFinite(c.point) ? null : d,
    se: null,
    df: Number.POSITIVE_INFINITY,
    interval: { low: finite(nearestRank(diffs, tail)), high: finite(nearestRank(diffs, 1 - tail)) },
    bound: { low: finite(nearestRank(diffs, oneSided)), high: finite(nearestRank(diffs, 1 - oneSided)) },
    pHigher: (1 + atOrBelow) / (n + 1),
    pLower: (1 + atOrAbove) / (n + 1),
    pHigherBeyond: (1 + withinAbove) / (n + 1),
    pLowerBeyond: (1 + withinBelow) / (n + 1),
  };
}

/**
 * The fewest bootstrap replicates with which every one of `gating` figures can reach Holm's
 * strictest level falseAlarm / gating: a percentile-bootstrap p-value is never below 1 / (B + 1),
 * so B + 1 must exceed gating / falseAlarm.
 */
export function minResamples(gating: number, falseAlarm: number): number {
  return Math.floor(Math.max(1, gating) / falseAlarm);
}

/**
 * The smallest true change the test would flag with the given power at one-sided level alpha:
 * (t₁₋α + t_power) standard errors. Null when the standard error is unknown.
 */
export function detectableChange(t: ChangeTest, alpha: number, power: number): number | null {
  if (t.se === null) return null;
  return (tQuantile(1 - alpha, t.df) + tQuantile(power, t.df)) * t.se;
}

/** Holm's step-down: which of the p-values are rejected with the family-wise error rate held at alpha. */
export function holm(pValues: readonly number[], alpha: number): boolean[] {
  const k = pValues.length;
  const order = pValues.map((p, i) => [p, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<boolean>(k).fill(false);
  for (let j = 0; j < k; j++) {
    if (order[j]![0] > alpha / (k - j)) break;
    out[order[j]![1]] = true;
  }
  return out;
}

/** Holm-adjusted p-values: the smallest family-wise level at which each is rejected. */
export function holmAdjusted(pValues: readonly number[]): number[] {
  const k = pValues.length;
  const order = pValues.map((p, i) => [p, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(k).fill(1);
  let running = 0;
  for (let j = 0; j < k; j++) {
    running = Math.max(running, Math.min(1, (k - j) * order[j]![0]));
    out[order[j]![1]] = running;
  }
  return out;
}
