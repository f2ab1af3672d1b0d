// Pure: how sure a count of "k of n" makes us of the share behind it. Exact (Clopper–Pearson)
// one-sided bounds on a binomial proportion, from the regularised incomplete beta function, so a
// rule can ask "is the share above what is allowed, with 95% confidence?" instead of reading one
// order statistic of a small sample (the p99 of 30 values is their maximum: one outlier decides it).

/** A share with its exact one-sided bounds at `confidence`. */
export interface ShareBounds {
  k: number;
  n: number;
  /** k / n (null when n = 0). */
  share: number | null;
  /** The share is above this with the stated confidence (0 when k = 0). */
  lower: number;
  /** The share is below this with the stated confidence (1 when k = n). */
  upper: number;
  confidence: number;
}

/** Exact one-sided Clopper–Pearson bounds of k successes in n trials, each at `confidence`. */
export function shareBounds(k: number, n: number, confidence = 0.95): ShareBounds {
  if (!(n >= 0) || !(k >= 0) || k > n) throw new RangeError(`shareBounds: need 0 ≤ k ≤ n, got k=${k}, n=${n}`);
  const alpha = 1 - confidence;
  if (n === 0) return { k, n, share: null, lower: 0, upper: 1, confidence };
  // lower: the p at which seeing k or more is as unlikely as alpha, P(X ≥ k | p) = I_p(k, n−k+1).
  const lower = k === 0 ? 0 : solve((p) => regIncBeta(p, k, n - k + 1) - alpha);
  // upper: the p at which seeing k or fewer is as unlikely as alpha, P(X ≤ k | p) = 1 − I_p(k+1, n−k).
  const upper = k === n ? 1 : solve((p) => alpha - (1 - regIncBeta(p, k + 1, n - k)));
  return { k, n, share: k / n, lower, upper, confidence };
}

/**
 * True when the share behind k of n is above `allowed` with `confidence`: its lower bound exceeds
 * it. One outlier in a small sample does not decide this (1 of 30 at 95%: lower bound 0.17%).
 */
export function shareExceeds(k: number, n: number, allowed: number, confidence = 0.95): boolean {
  return n > 0 && shareBounds(k, n, confidence).lower > allowed;
}

// Bisection on [0, 1] for an increasing f with a root inside (60 halvings: below 1e-18).
function solve(f: (p: number) => number): number {
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (f(mid) < 0) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** The regularised incomplete beta function I_x(a, b) (Numerical Recipes' continued fraction). */
export function regIncBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // The fraction converges fast for x below the mean; above it use the symmetry I_x(a,b) = 1 − I_{1−x}(b,a).
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(x, a, b)) / a : 1 - (front * betaFraction(1 - x, b, a)) / b;
}

function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 10_000; m++) {
    const m2 = 2 * m;
    let num = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + num / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    num = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + num / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return h;
}

// Lanczos approximation (g = 7, 9 terms): ~15 significant digits for x > 0.
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0. */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let s = LANCZOS[0]!;
  for (let i = 1; i < 9; i++) s += LANCZOS[i]! / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(s);
}
