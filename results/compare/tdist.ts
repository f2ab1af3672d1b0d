// Pure: Student's t distribution (CDF and quantile) and the standard normal, for the comparison's
// tests and its smallest detectable change. The t CDF comes from the regularized incomplete beta
// function (continued fraction, modified Lentz), accurate to ~1e-10 over the degrees of freedom a
// comparison meets (1 to millions); the quantile inverts it by bisection.
import { regIncBeta } from '../../shared/incomplete-beta.js';

/** The regularized incomplete beta function I_x(a, b). */
export const incompleteBeta = regIncBeta;

/** The standard normal CDF (erfc by its Chebyshev-fitted approximation, |error| < 1.2e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return z >= 0 ? 1 - erfc / 2 : erfc / 2;
}

/** P(T ≤ t) for Student's t with df degrees of freedom (df = ∞: the normal). */
export function tCdf(t: number, df: number): number {
  if (Number.isNaN(t)) return Number.NaN;
  if (t === Number.POSITIVE_INFINITY) return 1;
  if (t === Number.NEGATIVE_INFINITY) return 0;
  if (!Number.isFinite(df) || df > 1e7) return normalCdf(t);
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** The p-quantile of Student's t with df degrees of freedom, 0 < p < 1. */
export function tQuantile(p: number, df: number): number {
  if (p === 0.5) return 0;
  if (p < 0.5) return -tQuantile(1 - p, df);
  let lo = 0;
  let hi = 1;
  while (tCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * Math.max(1, hi); i++) {
    const mid = (lo + hi) / 2;
    if (tCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
