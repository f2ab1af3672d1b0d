import { describe, expect, it } from 'vitest';
import { newHistogram, recordNs } from '../shared/histogram.js';
import { exactQuantile, summarizeSorted } from './exact/rank-select.js';
import { histogramRankSummary } from './histogram-ranks.js';

describe('histogramRankSummary', () => {
  it('reads the exact summary ranks from a histogram, failures ranked +∞', () => {
    const h = newHistogram();
    // 96 successes at 1…96 ms and 4 failures: p95 is rank 95 of 100, a success (95 ms).
    for (let i = 1; i <= 96; i++) recordNs(h, i * 1e6);
    const s = histogramRankSummary(h, 4)!;
    expect(s.count).toBe(100);
    const exact = summarizeSorted([...Array.from({ length: 96 }, (_, i) => (i + 1) * 1e6), ...Array(4).fill(Number.POSITIVE_INFINITY)])!;
    // Within the histogram's precision (3 significant digits) of the exact nearest rank.
    expect(Math.abs(exactQuantile(s, 0.95) - exactQuantile(exact, 0.95)) / exactQuantile(exact, 0.95)).toBeLessThan(1e-3);
    expect(exactQuantile(s, 0.99)).toBe(Number.POSITIVE_INFINITY);
    expect(s.max).toBe(Number.POSITIVE_INFINITY);
    expect(s.min).toBeCloseTo(1e6, -3);
    // Six failures: the p95 rank (95) falls past the 94 successes.
    const h2 = newHistogram();
    for (let i = 1; i <= 94; i++) recordNs(h2, i * 1e6);
    expect(exactQuantile(histogramRankSummary(h2, 6)!, 0.95)).toBe(Number.POSITIVE_INFINITY);
    expect(histogramRankSummary(newHistogram(), 0)).toBeNull();
  });
});
