// Pure: how sure a count of "k of n" makes us of the share behind it. Exact (Clopper–Pearson)
// one-sided bounds on a binomial proportion, from the regularised incomplete beta function, so a
// rule can ask "is the share above what is allowed, with 95% confidence?" instead of reading one
// order statistic of a small sample (the p99 of 30 values is their maximum: one outlier decides it).
import { regIncBeta } from './incomplete-beta.js';

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
