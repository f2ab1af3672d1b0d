import { describe, expect, it } from 'vitest';
import { nearestRank } from '../../shared/histogram.js';
import { rngFromKey } from '../../shared/rng.js';
import type { ExactSummary } from './rank-select.js';
import { EXACT_QUANTILES, exactQuantile, keyDigit, keyValue, orderKey, RankSelection, summarizeSorted } from './rank-select.js';
import { SeriesValues } from './series-values.js';

/** The summary today's definition gives: sort every value, read nearest ranks. */
function bySort(values: readonly number[]): ExactSummary | null {
  return summarizeSorted(Float64Array.from(values).sort());
}

/** The streamed selection over `series`, every pass showing the values in a different order. */
function bySelection(
  series: readonly (readonly number[])[],
  budget: number,
  seed = 1,
): { summaries: (ExactSummary | null)[]; passes: number } {
  const sel = new RankSelection(
    series.map((v) => v.length),
    budget,
  );
  const all = series.flatMap((values, s) => values.map((v) => [s, v] as const));
  const rng = rngFromKey(`shuffle:${seed}`);
  const rand = () => rng.next();
  while (!sel.done) {
    sel.startPass();
    for (let i = all.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    for (const [s, v] of all) sel.visit(s, v);
    sel.finishPass();
    if (sel.passes > 6) throw new Error('more than six passes');
  }
  return { summaries: sel.summaries(), passes: sel.passes };
}

/** Same bits (so −0 and +0 differ) in every field. */
function expectSameSummaries(a: readonly (ExactSummary | null)[], b: readonly (ExactSummary | null)[]): void {
  const bits = (s: ExactSummary | null) =>
    s === null ? null : [s.count, ...[s.min, ...s.quantiles, s.max].map((v) => (Object.is(v, -0) ? '-0' : v))];
  expect(a.map(bits)).toEqual(b.map(bits));
}

const BUDGETS = [0, 1, 7, 100, 1 << 21];

function randomValues(n: number, seed: number, f: (r: () => number) => number): number[] {
  const rng = rngFromKey(`values:${seed}`);
  return Array.from({ length: n }, () => f(() => rng.next()));
}

describe('order keys', () => {
  const ordered = [
    Number.NEGATIVE_INFINITY,
    -1e300,
    -2,
    -1.0000000000000002,
    -1,
    -5e-324,
    -0,
    0,
    5e-324,
    1,
    1.0000000000000002,
    2 ** 52,
    1e300,
    Number.POSITIVE_INFINITY,
  ];

  it('orders keys as Float64Array.sort orders values (−0 before +0), and maps back', () => {
    const keys = ordered.map(orderKey);
    for (let i = 1; i < keys.length; i++) {
      const [ph, pl] = keys[i - 1]!;
      const [h, l] = keys[i]!;
      expect(h > ph || (h === ph && l > pl), `${ordered[i - 1]} < ${ordered[i]}`).toBe(true);
    }
    expect(Array.from(Float64Array.from([...ordered].reverse()).sort()).map(String)).toEqual(ordered.map(String));
    for (const v of ordered) expect(Object.is(keyValue(...orderKey(v)), v)).toBe(true);
  });

  it('splits a key into digits of 12 and 13 bits that rebuild it', () => {
    for (const v of randomValues(200, 3, (r) => (r() - 0.3) * 10 ** Math.floor(r() * 20))) {
      const [hi, lo] = orderKey(v);
      const digits = [0, 1, 2, 3, 4].map((l) => keyDigit(hi, lo, l));
      expect(digits[0]).toBeLessThan(1 << 12);
      for (const d of digits.slice(1)) expect(d).toBeLessThan(1 << 13);
      const bits = digits.reduce((acc, d, l) => (acc << BigInt(l === 0 ? 12 : 13)) | BigInt(d), 0n);
      expect(bits).toBe((BigInt(hi) << 32n) | BigInt(lo));
    }
  });
});

describe('exact summaries', () => {
  it('are nearest rank: min, p50, p90, p95, p99, max', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    const s = bySort(values)!;
    expect(s).toEqual({ count: 100, min: 1, max: 100, quantiles: [50, 90, 95, 99] });
    for (const q of EXACT_QUANTILES) expect(exactQuantile(s, q)).toBe(nearestRank(Float64Array.from(values).sort(), q));
    expect(() => exactQuantile(s, 0.75)).toThrow(/not 0.75/);
    expect(bySort([])).toBeNull();
    expect(bySort([7])).toEqual({ count: 1, min: 7, max: 7, quantiles: [7, 7, 7, 7] });
  });

  it('in memory: every series sorted on its own', () => {
    const m = new SeriesValues();
    const [a, b, c] = [m.newSeries(), m.newSeries(), m.newSeries()];
    const va = randomValues(1000, 5, (r) => Math.round(r() * 1e9));
    for (const v of va) m.add(a, v);
    m.add(c, 3);
    expect(m.total).toBe(1001);
    expectSameSummaries(m.summaries(), [bySort(va), null, bySort([3])]);
    expect(b).toBe(1);
  });
});

describe('streamed selection', () => {
  const series = [
    // ns latencies with many ties
    randomValues(5000, 1, (r) => 40e6 + Math.floor(r() * 200) * 1e3),
    // non-integer ns (tpot)
    randomValues(3000, 2, (r) => 15e6 + r() * 1e7),
    // schedule lag: negative, zero, −0 and positive
    [...randomValues(2000, 4, (r) => Math.round((r() - 0.2) * 1e6)), 0, -0, 0, -0],
    // empty
    [],
    // one value
    [42],
    // all the same value: no digit ever splits them
    Array.from({ length: 500 }, () => 123456789),
    // values at digit edges: powers of two and their neighbours, one ulp apart
    [...[1, 2, 4, 2 ** 30, 2 ** 31, 2 ** 32].flatMap((p) => [p, p * (1 - 2 ** -53), p * (1 + 2 ** -52)]), 2 ** 31, 2 ** 31],
    // values one ulp apart in the last mantissa bits only
    Array.from({ length: 300 }, (_, i) => 1e9 + i * 2 ** -23),
  ];
  const expected = series.map(bySort);

  for (const budget of BUDGETS)
    it(`finds exactly the figures a sort gives (collect budget ${budget})`, () => {
      const { summaries, passes } = bySelection(series, budget);
      expectSameSummaries(summaries, expected);
      expect(passes).toBeLessThanOrEqual(6);
    });

  it('one pass when everything fits the budget; five counting passes at most when nothing does', () => {
    expect(bySelection(series, 1 << 21).passes).toBe(1);
    expect(bySelection(series, 0).passes).toBe(5);
  });

  it('nothing to select without values', () => {
    const sel = new RankSelection([0, 0]);
    expect(sel.done).toBe(true);
    expect(sel.summaries()).toEqual([null, null]);
  });

  it('refuses a pass that does not show the values announced', () => {
    const counted = new RankSelection([3], 0);
    counted.startPass();
    counted.visit(0, 1);
    counted.visit(0, 2);
    expect(() => counted.finishPass()).toThrow(/counted 2 values in a range of 3/);
    const collected = new RankSelection([3]);
    collected.startPass();
    collected.visit(0, 1);
    expect(() => collected.finishPass()).toThrow(/showed 1 values in a range of 3/);
    expect(() => collected.summaries()).toThrow(/not done/);
  });
});
