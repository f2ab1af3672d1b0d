import { describe, expect, it } from 'vitest';
import { rngFromKey } from '../../shared/rng.js';
import { dependence, ranks } from './block-length.js';
import { blockMeans, blockQuantiles, nearestRank, stationaryDraw, twoLevel, variance } from './bootstrap.js';
import { holm, holmAdjusted, oneRunEstimate, repeatsEstimate, testChange } from './inference.js';
import { logAr } from './simulate.test-kit.js';
import { normalCdf, tCdf, tQuantile } from './tdist.js';

describe('Student t', () => {
  it('matches the tables', () => {
    expect(tQuantile(0.975, 1)).toBeCloseTo(12.706, 3);
    expect(tQuantile(0.975, 4)).toBeCloseTo(2.776, 3);
    expect(tQuantile(0.95, 10)).toBeCloseTo(1.812, 3);
    expect(tQuantile(0.975, Number.POSITIVE_INFINITY)).toBeCloseTo(1.96, 3);
    expect(tCdf(2.228, 10)).toBeCloseTo(0.975, 4);
    expect(tCdf(-1, 3)).toBeCloseTo(1 - tCdf(1, 3), 12);
    expect(normalCdf(1.644854)).toBeCloseTo(0.95, 6);
  });
});

describe('block length from the data', () => {
  it('is about 1 for independent values and grows with autocorrelation, as the correlation time does', () => {
    const at = (phi: number) => dependence(ranks(logAr(3000, phi, rngFromKey(`d${phi}`))), 750);
    const [iid, mid, high] = [at(0), at(0.5), at(0.95)];
    expect(iid.blockLen).toBeLessThan(3);
    expect(iid.tau).toBeLessThan(0.5);
    expect(mid.blockLen).toBeGreaterThan(iid.blockLen);
    expect(high.blockLen).toBeGreaterThan(3 * mid.blockLen);
    // AR(1)'s correlation time is 2φ/(1 − φ²): 1.3 at 0.5 and 19.5 at 0.95 (estimates fall short of the long tail).
    expect(mid.tau).toBeGreaterThan(0.7);
    expect(mid.tau).toBeLessThan(2);
    expect(high.tau).toBeGreaterThan(8);
  });

  it('ranks ties by their mean rank and +∞ last', () => {
    expect([...ranks([3, Number.POSITIVE_INFINITY, 1, 3])]).toEqual([2.5, 4, 1, 2.5]);
  });
});

describe('stationary block bootstrap', () => {
  it('draws runs of consecutive positions, wrapping around, of the mean length asked', () => {
    const out = new Uint32Array(100_000);
    stationaryDraw(out.length, 20, rngFromKey('s'), out);
    let breaks = 0;
    for (let i = 1; i < out.length; i++) if (out[i] !== (out[i - 1]! + 1) % out.length) breaks++;
    expect(out.length / (breaks + 1)).toBeGreaterThan(18);
    expect(out.length / (breaks + 1)).toBeLessThan(22);
  });

  it('resamples quantiles by counting drawn ranks exactly as sorting each resample would', () => {
    const series = Float64Array.from([21, 3, 144, 8, 5, 377, 13, 55, 34, 233, 89]);
    const fast = blockQuantiles(series, [0.5, 0.95], 50, 3, rngFromKey('x'));
    const rng = rngFromKey('x');
    const draw = new Uint32Array(series.length);
    for (let b = 0; b < 50; b++) {
      stationaryDraw(series.length, 3, rng, draw);
      const sorted = Float64Array.from(draw, (i) => series[i]!).sort();
      expect([fast[0]![b], fast[1]![b]]).toEqual([nearestRank(sorted, 0.5), nearestRank(sorted, 0.95)]);
    }
  });

  it("holds an autocorrelated mean's variance that iid resampling misses", () => {
    const rng = rngFromKey('v');
    const truth: number[] = [];
    for (let i = 0; i < 200; i++) truth.push(logAr(3000, 0.9, rng).reduce((s, v) => s + v, 0) / 3000);
    const one = logAr(3000, 0.9, rng);
    const d = dependence(one);
    const blocks = variance(blockMeans(one, 500, d.blockLen, rng));
    const iid = variance(blockMeans(one, 500, 1, rng));
    expect(iid).toBeLessThan(variance(truth) / 4);
    expect(blocks).toBeGreaterThan(variance(truth) / 2);
    expect(blocks).toBeLessThan(variance(truth) * 2);
  });

  it('two levels: runs drawn with replacement, then one of each drawn run’s replicates', () => {
    const reps = twoLevel(
      [
        { figure: 10, replicates: Float64Array.from([9, 11]) },
        { figure: 20, replicates: null },
      ],
      2000,
      rngFromKey('t'),
    );
    expect(Math.min(...reps)).toBe(9);
    expect(Math.max(...reps)).toBe(20);
  });
});

describe('the test of a change', () => {
  it('one run: corrects the block variance for its shortfall and takes degrees of freedom from the blocks', () => {
    const e = oneRunEstimate('mean', 10, Float64Array.from([9, 11]), 400, 10, 5);
    expect(e.variance).toBeCloseTo(2 / 0.5, 10); // variance 2, short by tau/b = 1/2
    expect(e.df).toBe(39);
    expect(oneRunEstimate('quantile', 10, Float64Array.from([9, 11]), 400, 10, 9).shortRun).toBe(true);
  });

  it('repeats: the runs’ variance over their count, never below their own noise', () => {
    expect(repeatsEstimate([10, 12, 14], [0.1, 0.1, 0.1], new Float64Array(1)).variance).toBeCloseTo(4 / 3, 10);
    expect(repeatsEstimate([10, 10.01], [3, 5], new Float64Array(1))).toMatchObject({ variance: 2, df: 1 });
  });

  it("Welch's t between the sides", () => {
    const b = { point: 100, replicates: new Float64Array(0), variance: 4, df: 20 };
    const c = { point: 110, replicates: new Float64Array(0), variance: 5, df: 20 };
    const t = testChange(b, c, 0.95);
    expect(t.delta).toBe(10);
    expect(t.se).toBe(3);
    expect(t.pHigher).toBeCloseTo(1 - tCdf(10 / 3, t.df), 12);
    expect(t.interval.low).toBeCloseTo(10 - tQuantile(0.975, t.df) * 3, 10);
  });

  it('the percentile test when failures make replicates +∞', () => {
    const inf = Number.POSITIVE_INFINITY;
    const b = { point: 100, replicates: Float64Array.from({ length: 99 }, () => 100), variance: 0, df: 10 };
    const c = { point: inf, replicates: Float64Array.from({ length: 99 }, (_, i) => (i < 90 ? inf : 101)), variance: inf, df: 10 };
    const t = testChange(b, c, 0.95);
    expect(t.se).toBeNull();
    expect(t.pHigher).toBeCloseTo(1 / 100, 12);
    expect(t.interval.high).toBeNull();
  });

  it("Holm's step-down", () => {
    expect(holm([0.01, 0.04, 0.03], 0.05)).toEqual([true, false, false]);
    expect(holm([0.01, 0.02, 0.03], 0.05)).toEqual([true, true, true]);
    expect(holmAdjusted([0.01, 0.04, 0.03])).toEqual([0.03, 0.06, 0.06]);
  });
});
