// Pure: how long the resampled blocks of a time-ordered series must be, chosen from the data by
// Politis and White's automatic rule (2004, with Patton, Politis and White's 2009 correction) for
// the stationary bootstrap. The rule estimates the series' long-run variance and how far its
// autocorrelation reaches (a flat-top lag window up to the first run of insignificant lags) and
// returns the block length that minimises the bootstrap variance estimate's mean squared error.
// Latencies are read by rank: a failed request ranks +∞ and a long tail would otherwise dominate
// the autocovariances, while the quantiles the comparison resamples depend on ranks only.

/** Ranks 1..n of values (ties take their mean rank; +∞ ranks last). */
export function ranks(values: ArrayLike<number>): Float64Array {
  const n = values.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => values[a]! - values[b]! || 0);
  const out = new Float64Array(n);
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && values[order[j + 1]!] === values[order[i]!]) j++;
    const r = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) out[order[k]!] = r;
    i = j + 1;
  }
  return out;
}

/** What the block length is chosen from. */
export interface Dependence {
  /** The stationary bootstrap's MSE-optimal expected block length (≥ 1, at most min(3√n, n/3)). */
  blockLen: number;
  /**
   * The series' correlation time Σ|k|γ(k) / Σγ(k) in requests: the first-order bias of a block
   * bootstrap variance with blocks of mean length b is −τ/b of it.
   */
  tau: number;
}

/** Politis–White's estimates for series x; maxLag bounds the lags read (default: √n + 5, theirs). */
export function dependence(x: ArrayLike<number>, maxLag?: number): Dependence {
  const n = x.length;
  if (n < 8) return { blockLen: 1, tau: 0 };
  let mean = 0;
  for (let i = 0; i < n; i++) mean += x[i]!;
  mean /= n;
  const e = Float64Array.from({ length: n }, (_, i) => x[i]! - mean);
  const bMax = Math.ceil(Math.min(3 * Math.sqrt(n), n / 3));
  const kn = Math.max(5, Math.floor(Math.log10(n)));
  const mMax = Math.min(n - 2, maxLag ?? Math.ceil(Math.sqrt(n)) + kn);
  // Lags whose correlation is below this are taken as zero.
  const cv = 2 * Math.sqrt(Math.log10(n) / n);
  const acv = new Float64Array(mMax + 1);
  const absCorr = new Float64Array(mMax + 1);
  let optM: number | null = null;
  for (let k = 0; k <= mMax; k++) {
    let cross = 0;
    for (let i = k; i < n; i++) cross += e[i]! * e[i - k]!;
    acv[k] = cross / n;
    // The autocorrelation of lag k + 1, normalised by both overlapping segments.
    let v1 = 0;
    let v2 = 0;
    let c1 = 0;
    for (let i = k + 1; i < n; i++) {
      v1 += e[i]! * e[i]!;
      v2 += e[i - k - 1]! * e[i - k - 1]!;
      c1 += e[i]! * e[i - k - 1]!;
    }
    absCorr[k] = v1 > 0 && v2 > 0 ? Math.abs(c1) / Math.sqrt(v1 * v2) : 0;
    if (k >= kn && optM === null) {
      let quiet = true;
      for (let j = k - kn; j < k; j++) if (absCorr[j]! >= cv) quiet = false;
      if (quiet) optM = k - kn;
    }
    if (optM !== null && k >= 2 * Math.max(optM, 1)) break;
  }
  if (acv[0] === 0) return { blockLen: 1, tau: 0 };
  const m = Math.min(optM === null ? mMax : 2 * Math.max(optM, 1), mMax);
  let g = 0;
  let longRun = acv[0]!;
  for (let k = 1; k <= m; k++) {
    const lambda = k / m <= 0.5 ? 1 : 2 * (1 - k / m);
    g += 2 * lambda * k * acv[k]!;
    longRun += 2 * lambda * acv[k]!;
  }
  if (!(longRun > 0)) return { blockLen: 1, tau: 0 };
  const dSb = 2 * longRun * longRun;
  const b = ((2 * g * g) / dSb) ** (1 / 3) * n ** (1 / 3);
  return { blockLen: Math.max(1, Math.min(bMax, Number.isFinite(b) ? b : bMax)), tau: Math.max(0, g / longRun) };
}
