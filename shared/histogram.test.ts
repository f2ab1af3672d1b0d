import { describe, expect, it } from 'vitest';
import {
  addEncoded,
  decodeHistogram,
  encodeHistogram,
  mergeInto,
  nearestRank,
  newHistogram,
  percentilesNs,
  recordNs,
  summarizeMs,
} from './histogram.js';
import { rngFromKey } from './rng.js';

const Q = [0, 0.5, 0.9, 0.95, 0.99, 1];

function lognormalNs(n: number, key: string): number[] {
  const rng = rngFromKey(key);
  return Array.from({ length: n }, () => Math.round(Math.exp(17 + rng.gaussian())));
}

describe('nearest rank', () => {
  it('uses index ceil(q·n) − 1', () => {
    const v = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    expect(nearestRank(v, 0.95)).toBe(12); // ceil(11.4) = 12 (HdrHistogram's rounding would give 11)
    expect(nearestRank(v, 0.5)).toBe(6);
    expect(nearestRank(v, 0.99)).toBe(12);
    expect(nearestRank([7], 0.99)).toBe(7);
  });
});

describe('HDR histograms', () => {
  it('report nearest-rank percentiles within 0.05% of exact', () => {
    const values = lognormalNs(20_000, 'a');
    const h = newHistogram();
    for (const v of values) recordNs(h, v);
    const sorted = [...values].sort((a, b) => a - b);
    const got = percentilesNs(h, Q);
    for (const [i, q] of Q.entries()) expect(Math.abs(got[i]! - nearestRank(sorted, q)) / nearestRank(sorted, q)).toBeLessThan(0.0005);
  });

  it('merge (through the encoded form) equals one histogram fed every value', () => {
    const parts = [lognormalNs(3000, 'p1'), lognormalNs(5000, 'p2'), lognormalNs(700, 'p3')];
    const single = newHistogram();
    const merged = newHistogram();
    for (const part of parts) {
      const h = newHistogram();
      for (const v of part) {
        recordNs(h, v);
        recordNs(single, v);
      }
      mergeInto(merged, decodeHistogram(encodeHistogram(h)));
    }
    expect(merged.totalCount).toBe(single.totalCount);
    expect(percentilesNs(merged, Q)).toEqual(percentilesNs(single, Q));
  });

  it('addEncoded equals decode + merge exactly (counts, total, min, max), large counts included', () => {
    const viaDecode = newHistogram();
    const direct = newHistogram();
    const parts = [lognormalNs(3000, 'd1'), [], [1, 2, 3, 3_600_000_000_000], lognormalNs(50, 'd2')];
    for (const part of parts) {
      const h = newHistogram();
      for (const v of part) recordNs(h, v);
      if (part.length === 3) h.recordValueWithCount(7_000_000, 2 ** 40 + 3);
      const enc = encodeHistogram(h);
      mergeInto(viaDecode, decodeHistogram(enc));
      addEncoded(direct, enc);
    }
    expect(direct.totalCount).toBe(viaDecode.totalCount);
    expect(direct.maxValue).toBe(viaDecode.maxValue);
    expect(direct.minNonZeroValue).toBe(viaDecode.minNonZeroValue);
    expect(encodeHistogram(direct)).toBe(encodeHistogram(viaDecode));
    expect(() => addEncoded(direct, 'bm90IGEgaGlzdG9ncmFt')).toThrow(/not a V2/);
  });

  it('keeps counts past 2^32 (no 32-bit wrap) through encode and decode', () => {
    const h = newHistogram();
    h.recordValueWithCount(1_000_000, 2 ** 33);
    h.recordValueWithCount(5_000_000, 2 ** 32 + 5);
    const back = decodeHistogram(encodeHistogram(h));
    expect(back.totalCount).toBe(2 ** 33 + 2 ** 32 + 5);
    expect(percentilesNs(back, [0.5])[0]).toBeCloseTo(1_000_000, -3);
  });

  it('summarises an empty histogram as nulls, never zeros', () => {
    expect(summarizeMs(newHistogram())).toMatchObject({ samples: 0, p95_ms: null, mean_ms: null });
  });

  it('clamps out-of-range values instead of throwing', () => {
    const h = newHistogram();
    recordNs(h, -5);
    recordNs(h, 1e15);
    expect(h.totalCount).toBe(2);
  });
});
