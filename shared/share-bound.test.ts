import { describe, expect, it } from 'vitest';
import { logGamma, regIncBeta } from './incomplete-beta.js';
import { shareBounds, shareExceeds } from './share-bound.js';

describe('share bounds (exact one-sided Clopper–Pearson)', () => {
  it('matches closed forms at the edges', () => {
    // k = 0: upper = 1 − α^(1/n); k = n: lower = α^(1/n); k = 1: lower = 1 − (1 − α)^(1/n).
    expect(shareBounds(0, 30).upper).toBeCloseTo(1 - 0.05 ** (1 / 30), 9);
    expect(shareBounds(30, 30).lower).toBeCloseTo(0.05 ** (1 / 30), 9);
    expect(shareBounds(1, 30).lower).toBeCloseTo(1 - 0.95 ** (1 / 30), 9);
    expect(shareBounds(0, 30).lower).toBe(0);
    expect(shareBounds(30, 30).upper).toBe(1);
    expect(shareBounds(0, 0)).toMatchObject({ share: null, lower: 0, upper: 1 });
  });

  it('matches published values in the middle', () => {
    // 50 of 100, one-sided 95% (the two-sided 90% Clopper–Pearson interval), as scipy's
    // beta.ppf(0.05, 50, 51) and beta.ppf(0.95, 51, 50) give it.
    const b = shareBounds(50, 100);
    expect(b.lower).toBeCloseTo(0.4136217146, 8);
    expect(b.upper).toBeCloseTo(0.5863782854, 8);
    // Symmetry: the lower bound of k of n is 1 − the upper bound of n − k of n.
    expect(shareBounds(7, 40).lower).toBeCloseTo(1 - shareBounds(33, 40).upper, 12);
  });

  it('its lower bound is above the true share at most 5% of the time (exact, over the binomial)', () => {
    for (const n of [30, 200, 1000])
      for (const p of [0.005, 0.01, 0.02, 0.1]) {
        // The probability of every count whose lower bound exceeds p, summed over Binomial(n, p).
        let falseAlarm = 0;
        let logPmf = n * Math.log1p(-p);
        for (let k = 0; k <= n; k++) {
          if (k > 0) logPmf += Math.log((n - k + 1) / k) + Math.log(p / (1 - p));
          if (shareBounds(k, n).lower > p) falseAlarm += Math.exp(logPmf);
        }
        expect(falseAlarm, `n ${n}, p ${p}`).toBeLessThanOrEqual(0.05);
        expect(falseAlarm, `n ${n}, p ${p}`).toBeGreaterThan(0.005);
      }
  });

  it('one outlier in a small sample does not decide; a real share does', () => {
    expect(shareExceeds(1, 30, 0.01)).toBe(false);
    expect(shareExceeds(1, 10, 0.01)).toBe(false);
    // …though in a tiny sample one is real evidence: 1 of 5 puts the share above 1% at 95%.
    expect(shareExceeds(1, 5, 0.01)).toBe(true);
    expect(shareExceeds(6, 30, 0.01)).toBe(true);
    expect(shareExceeds(300, 10_000, 0.01)).toBe(true);
    expect(shareExceeds(110, 10_000, 0.01)).toBe(false);
    expect(shareExceeds(0, 0, 0.01)).toBe(false);
  });

  it('gamma and incomplete beta agree with known values', () => {
    expect(logGamma(5)).toBeCloseTo(Math.log(24), 12);
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 12);
    expect(regIncBeta(0.3, 1, 1)).toBeCloseTo(0.3, 12);
    expect(regIncBeta(0.5, 2, 2)).toBeCloseTo(0.5, 12);
    expect(regIncBeta(0.2, 2, 3)).toBeCloseTo(0.1808, 4);
  });
});
