import { describe, expect, it } from 'vitest';
import { isoDuration, sequenceLength, statsFromCounts, statsFromWindow } from './benchmark-report.js';

describe('Benchmark Report figures', () => {
  it('exact nearest-rank statistics from value counts', () => {
    // 1..100 once each: nearest rank p50 = 50, p99 = 99, p99.9 = 100, p0.1 = 1.
    const counts = new Map(Array.from({ length: 100 }, (_, i) => [i + 1, 1] as [number, number]));
    const s = statsFromCounts(counts, 'count')!;
    expect([s.min, s.p0p1, s.p1, s.p25, s.p50, s.p90, s.p99, s.p99p9, s.max, s.mean]).toEqual([1, 1, 1, 25, 50, 90, 99, 100, 100, 50.5]);
    expect(s.stddev).toBeCloseTo(Math.sqrt((100 * 100 - 1) / 12), 9);
    // Weighted: 9 at 10 and 1 at 1,000: p90 still 10, p95 the outlier.
    const w = statsFromCounts(
      new Map([
        [10, 9],
        [1000, 1],
      ]),
      'count',
    )!;
    expect([w.p90, w.p95, w.mean]).toEqual([10, 1000, 109]);
    expect(statsFromCounts(new Map(), 'count')).toBeNull();
  });

  it('a window without the metric has no statistics, not zeros', () => {
    expect(statsFromWindow({ ttft_samples: 0, ttft_mean_ms: null }, 'ttft')).toBeNull();
    expect(statsFromWindow({ ttft_samples: 2, ttft_mean_ms: 5, ttft_p50_ms: 4, ttft_max_ms: 6 }, 'ttft')).toEqual({
      units: 'ms',
      mean: 5,
      p50: 4,
      max: 6,
    });
  });

  it('sequence lengths and durations as the standard words them', () => {
    expect(sequenceLength(128, 130)).toEqual({ distribution: 'fixed', value: 128 });
    expect(sequenceLength({ distribution: 'uniform', min: 10, max: 30 }, 19)).toEqual({
      distribution: 'uniform',
      value: 20,
      min: 10,
      max: 30,
    });
    expect(sequenceLength({ distribution: 'lognormal', mu: 5, sigma: 1, min: 16, max: 1024 }, 181.5)).toEqual({
      distribution: 'other',
      value: 181.5,
      min: 16,
      max: 1024,
    });
    expect(sequenceLength(undefined, null)).toBeNull();
    expect([isoDuration(7908.044), isoDuration(60_000), isoDuration(1500)]).toEqual(['PT7.908S', 'PT60S', 'PT1.5S']);
  });
});
