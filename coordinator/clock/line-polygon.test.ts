import { describe, expect, it } from 'vitest';
import { CLOCK_DRIFT_LIMIT, centreLine, driftRange, linePolygon, offsetRangeAt, smallestSlack } from './line-polygon.js';

const inf = Number.POSITIVE_INFINITY;

describe('the lines through one-sided offset bounds', () => {
  it('is the exact polygon of (offset, drift): its range at an instant and its drifts at the vertices', () => {
    // 0 ≤ θ(0) ≤ 10 and 0 ≤ θ(1000) ≤ 10 (ns): drifts from −1% to +1%.
    const bounds = [
      { t: 0, lo: 0, hi: 10 },
      { t: 1000, lo: 0, hi: 10 },
    ];
    const poly = linePolygon(bounds, 500, CLOCK_DRIFT_LIMIT);
    expect(poly.vertices).toHaveLength(4);
    const d = driftRange(poly);
    expect(d.lo).toBeCloseTo(-0.01, 12);
    expect(d.hi).toBeCloseTo(0.01, 12);
    // Reaching the box's edge: bounded only by the limit, so not bounded by the bounds.
    expect(d.bounded).toBe(false);
    expect(offsetRangeAt(poly, 500).map((x) => Math.round(x * 1e6) / 1e6)).toEqual([0, 10]);
    // At 2000 the lines fan out: from −10 (drift −1%) to 20 (drift +1%).
    expect(offsetRangeAt(poly, 2000).map((x) => Math.round(x * 1e6) / 1e6)).toEqual([-10, 20]);
    const c = centreLine(poly, 0, 1000);
    expect(c.at(0)).toBeCloseTo(5, 9);
    expect(c.halfWidth).toBeCloseTo(5, 9);
  });

  it('bounds a drift from bounds that are one-sided at each instant', () => {
    // θ(0) ≤ 0 and θ(1e9) ≥ 1e5: the drift is at least 100 ppm; θ(0) ≥ −1e4 and θ(2e9) ≤ 3e5: at most 155 ppm.
    const bounds = [
      { t: 0, lo: -inf, hi: 0 },
      { t: 0, lo: -1e4, hi: inf },
      { t: 1e9, lo: 1e5, hi: inf },
      { t: 2e9, lo: -inf, hi: 3e5 },
    ];
    const d = driftRange(linePolygon(bounds, 1e9, CLOCK_DRIFT_LIMIT));
    expect(d.bounded).toBe(true);
    expect(d.lo * 1e6).toBeCloseTo(100, 9);
    expect(d.hi * 1e6).toBeCloseTo(155, 9);
  });

  it('finds the least slack that lets a line through bounds that cross, and none when one passes', () => {
    const crossing = [
      { t: 0, lo: -inf, hi: 0 },
      { t: 0, lo: 100, hi: inf },
      { t: 1e9, lo: -inf, hi: 1e6 },
      { t: 1e9, lo: 0, hi: inf },
    ];
    // At t = 0 the bounds cross by 100 ns: each widened by 50.
    expect(smallestSlack(crossing, 5e8, CLOCK_DRIFT_LIMIT)).toBeCloseTo(50, 6);
    expect(linePolygon(crossing, 5e8, CLOCK_DRIFT_LIMIT).vertices).toHaveLength(0);
    expect(linePolygon(crossing, 5e8, CLOCK_DRIFT_LIMIT, 50.001).vertices.length).toBeGreaterThan(0);
    expect(smallestSlack([{ t: 0, lo: 0, hi: 1 }], 0, CLOCK_DRIFT_LIMIT)).toBe(0);
  });
});
