// Pure: bootstrap replicates that respect the order requests came in. A queueing server's latencies
// are autocorrelated (a queue that builds up lifts a run of consecutive requests), so a run's
// time-ordered series is resampled in blocks of consecutive requests — the stationary bootstrap
// (Politis and Romano 1994): blocks start at uniform positions, have geometric lengths of the given
// mean and wrap around the end. With repeated runs a side, runs are resampled first and blocks
// within each drawn run second (the two levels of Kalibera and Jones 2013). Seeded (shared/rng.ts),
// so the same inputs give the same replicates on every machine.
import type { Rng } from '../../shared/rng.js';

/** The nearest-rank q-quantile of values sorted ascending (the rank run.json uses); null without values. */
export function nearestRank(sorted: ArrayLike<number>, q: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  return sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!;
}

/** Fills out with one stationary-bootstrap draw of positions 0..n−1, blocks of mean length blockLen. */
export function stationaryDraw(n: number, blockLen: number, rng: Rng, out: Uint32Array): void {
  const pNew = 1 / Math.max(1, blockLen);
  let at = Math.floor(rng.next() * n);
  for (let i = 0; i < n; i++) {
    if (i > 0) at = rng.next() < pNew ? Math.floor(rng.next() * n) : (at + 1) % n;
    out[i] = at;
  }
}

/**
 * `resamples` block-bootstrap replicates of the nearest-rank quantiles `qs` (ascending) of a
 * time-ordered series, one Float64Array per quantile. A resample is a multiset of positions, so its
 * k-th smallest value is found by counting draws per rank and scanning once: O(n) per resample.
 */
export function blockQuantiles(
  series: ArrayLike<number>,
  qs: readonly number[],
  resamples: number,
  blockLen: number,
  rng: Rng,
): Float64Array[] {
  const n = series.length;
  const out = qs.map(() => new Float64Array(resamples));
  if (n === 0) return out;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => series[a]! - series[b]! || 0);
  const sorted = Float64Array.from(order, (i) => series[i]!);
  const rankOf = new Uint32Array(n);
  for (let r = 0; r < n; r++) rankOf[order[r]!] = r;
  const ranks = qs.map((q) => Math.min(n, Math.max(1, Math.ceil(q * n))));
  const counts = new Uint32Array(n);
  const draw = new Uint32Array(n);
  for (let b = 0; b < resamples; b++) {
    stationaryDraw(n, blockLen, rng, draw);
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[rankOf[draw[i]!]!]!++;
    let cum = 0;
    let qi = 0;
    for (let r = 0; r < n && qi < ranks.length; r++) {
      cum += counts[r]!;
      while (qi < ranks.length && cum >= ranks[qi]!) out[qi++]![b] = sorted[r]!;
    }
  }
  return out;
}

/** `resamples` block-bootstrap replicates of the mean of a time-ordered series. */
export function blockMeans(series: ArrayLike<number>, resamples: number, blockLen: number, rng: Rng): Float64Array {
  const n = series.length;
  const out = new Float64Array(resamples);
  if (n === 0) return out;
  const draw = new Uint32Array(n);
  for (let b = 0; b < resamples; b++) {
    stationaryDraw(n, blockLen, rng, draw);
    let s = 0;
    for (let i = 0; i < n; i++) s += series[draw[i]!]!;
    out[b] = s / n;
  }
  return out;
}

/**
 * The two-level replicates of a side's figure, the mean over its runs: each replicate draws as many
 * runs as the side has, with replacement, and for each drawn run one of its own within-run
 * replicates at random. A run without within-run replicates (a figure read from run.json, such as
 * ITL) contributes its figure itself.
 */
export function twoLevel(
  perRun: readonly { figure: number; replicates: Float64Array | null }[],
  resamples: number,
  rng: Rng,
): Float64Array {
  const m = perRun.length;
  const out = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let s = 0;
    for (let j = 0; j < m; j++) {
      const run = perRun[Math.floor(rng.next() * m)]!;
      s += run.replicates ? run.replicates[Math.floor(rng.next() * run.replicates.length)]! : run.figure;
    }
    out[b] = s / m;
  }
  return out;
}

export function mean(values: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i]!;
  return s / values.length;
}

/** The sample variance (n − 1 denominator) of finite values; +∞ when any is infinite, 0 for one value. */
export function variance(values: ArrayLike<number>): number {
  const n = values.length;
  if (n < 2) return 0;
  const m = mean(values);
  if (!Number.isFinite(m)) return Number.POSITIVE_INFINITY;
  let s = 0;
  for (let i = 0; i < n; i++) s += (values[i]! - m) ** 2;
  return s / (n - 1);
}
