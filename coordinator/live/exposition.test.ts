import { describe, expect, it } from 'vitest';
import { newHistogram, recordNs } from '../../shared/histogram.js';
import { rngFromKey } from '../../shared/rng.js';
import { hist } from '../../test/live-fixtures.js';
import { parsePrometheus } from '../../test/prom-parse.js';
import { formatValue, histogramSeries, writeExposition } from './exposition.js';

describe('writeExposition', () => {
  it('writes HELP, TYPE and samples exactly, escaping help and label values', () => {
    const text = writeExposition([
      {
        name: 'x_total',
        help: 'A counter\\with a backslash\nand a newline.',
        type: 'counter',
        samples: [{ labels: { class: 'a"b' }, value: 3 }],
      },
      { name: 'y', help: 'A gauge.', type: 'gauge', samples: [{ labels: {}, value: 0.25 }] },
      {
        name: 'z_seconds',
        help: 'A histogram.',
        type: 'histogram',
        series: [
          {
            labels: { class: 'rt' },
            buckets: [
              { le: 0.1, count: 1 },
              { le: 1, count: 3 },
            ],
            sum: 1.5,
            count: 4,
          },
        ],
      },
    ]);
    expect(text).toBe(
      [
        '# HELP x_total A counter\\\\with a backslash\\nand a newline.',
        '# TYPE x_total counter',
        'x_total{class="a\\"b"} 3',
        '# HELP y A gauge.',
        '# TYPE y gauge',
        'y 0.25',
        '# HELP z_seconds A histogram.',
        '# TYPE z_seconds histogram',
        'z_seconds_bucket{class="rt",le="0.1"} 1',
        'z_seconds_bucket{class="rt",le="1"} 3',
        'z_seconds_bucket{class="rt",le="+Inf"} 4',
        'z_seconds_sum{class="rt"} 1.5',
        'z_seconds_count{class="rt"} 4',
        '',
      ].join('\n'),
    );
    const parsed = parsePrometheus(text);
    expect(parsed.samples.find((s) => s.name === 'x_total')?.labels.class).toBe('a"b');
  });

  it('spells out infinities and NaN', () => {
    expect([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN, 1e-7, 42].map(formatValue)).toEqual([
      '+Inf',
      '-Inf',
      'NaN',
      '1e-7',
      '42',
    ]);
  });

  it('the test parser rejects what Prometheus would reject', () => {
    expect(() => parsePrometheus('# TYPE a counter\nb 1\n')).toThrow(/undeclared/);
    expect(() => parsePrometheus('# TYPE a counter\na{x=1} 1\n')).toThrow(/bad labels/);
    expect(() => parsePrometheus('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n')).toThrow(
      /cumulative/,
    );
    expect(() => parsePrometheus('# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n')).toThrow(/!= _count/);
  });
});

describe('histogramSeries', () => {
  it('counts known values into cumulative buckets in seconds', () => {
    const h = newHistogram();
    for (const ms of [0.5, 0.7, 3, 50, 50, 2000]) recordNs(h, ms * 1e6);
    const s = histogramSeries(h, [0.001, 0.005, 0.1, 1], { class: 'rt' });
    expect(s.buckets).toEqual([
      { le: 0.001, count: 2 },
      { le: 0.005, count: 3 },
      { le: 0.1, count: 5 },
      { le: 1, count: 5 },
    ]);
    expect(s.count).toBe(6);
    expect(s.sum).toBeCloseTo(2.1042, 3); // 0.0005 + 0.0007 + 0.003 + 0.05 + 0.05 + 2, each within 0.05%
    expect(s.labels).toEqual({ class: 'rt' });
  });

  it('counts zeros, and every value even when the lowest-value tracking is off', () => {
    const h = hist(0, 0.5, 30);
    expect(histogramSeries(h, [0.001, 1], {}).buckets).toEqual([
      { le: 0.001, count: 2 },
      { le: 1, count: 3 },
    ]);
    const g = hist(0.5, 30);
    g.minNonZeroValue = 1e12; // as if the tracking value were wrong: the full scan still finds both
    expect(histogramSeries(g, [0.001, 1], {}).buckets).toEqual([
      { le: 0.001, count: 1 },
      { le: 1, count: 2 },
    ]);
  });

  it('an empty histogram gives zero buckets, sum and count', () => {
    const s = histogramSeries(newHistogram(), [0.1, 1], {});
    expect(s).toEqual({
      labels: {},
      buckets: [
        { le: 0.1, count: 0 },
        { le: 1, count: 0 },
      ],
      sum: 0,
      count: 0,
    });
  });

  it('matches exact counting of random values except within 0.05% of a bound', () => {
    const rng = rngFromKey('exposition');
    const bounds = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
    const h = newHistogram();
    const values: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const ns = Math.round(10 ** (5 + rng.next() * 5.5)); // 0.1 ms … 30 s, log-uniform
      values.push(ns);
      recordNs(h, ns);
    }
    const s = histogramSeries(h, bounds, {});
    const nearBound = (ns: number): boolean => bounds.some((b) => Math.abs(ns - b * 1e9) <= b * 1e9 * 0.0005);
    bounds.forEach((b, i) => {
      const exact = values.filter((v) => v <= b * 1e9).length;
      const slack = values.filter(nearBound).length;
      expect(Math.abs(s.buckets[i]!.count - exact)).toBeLessThanOrEqual(slack);
    });
    expect(s.count).toBe(values.length);
    const exactSum = values.reduce((a, v) => a + v, 0) / 1e9;
    expect(Math.abs(s.sum - exactSum) / exactSum).toBeLessThan(0.0005);
  });
});
