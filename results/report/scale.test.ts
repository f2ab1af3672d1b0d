import { describe, expect, it } from 'vitest';
import { formatExact, formatNumber, linearScale, logScale, niceDomain, niceTicks, wantsLog } from './scale.js';

describe('axis arithmetic', () => {
  it('picks round 1/2/5 steps', () => {
    expect(niceTicks(0, 10, 5)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(niceTicks(0, 2348, 5)).toEqual([0, 500, 1000, 1500, 2000]);
    expect(niceTicks(0.2, 0.9, 4)).toEqual([0.2, 0.4, 0.6, 0.8]);
    expect(niceTicks(3, 3)).toEqual([3]);
  });

  it('widens a domain to labelled ticks and never returns an empty one', () => {
    expect(niceDomain(0, 2348)).toEqual([0, 2500]);
    expect(niceDomain(0, 1.016)).toEqual([0, 1.2]);
    expect(niceDomain(0, 0)).toEqual([0, 1]);
    expect(niceDomain(7, 7)).toEqual([0, 14]);
  });

  it('maps linearly, y inverted when asked', () => {
    const s = linearScale([0, 100], 200, 0);
    expect(s.at(0)).toBe(200);
    expect(s.at(25)).toBe(150);
    expect(s.at(100)).toBe(0);
  });

  it('log scale spans whole decades and labels 1-2-5 when it spans few', () => {
    const wide = logScale(132.576, 15919.173, 0, 300);
    expect(wide.domain).toEqual([100, 100000]);
    expect(wide.ticks).toEqual([100, 1000, 10000, 100000]);
    expect(wide.at(1000)).toBeCloseTo(100, 9);
    const narrow = logScale(2, 80, 0, 100);
    expect(narrow.ticks).toEqual([1, 2, 5, 10, 20, 50, 100]);
  });

  it('asks for a log axis only past the ratio and only for positive values', () => {
    expect(wantsLog([133.395, 15378.459])).toBe(true);
    expect(wantsLog([0.07, 1.016])).toBe(false);
    expect(wantsLog([0, 83])).toBe(false);
  });

  it('formats for axes (rounded by magnitude) and for tables (as recorded)', () => {
    expect(formatNumber(15378.459)).toBe('15,378');
    expect(formatNumber(133.395)).toBe('133.4');
    expect(formatNumber(0.0703125)).toBe('0.07');
    expect(formatNumber(null)).toBe('–');
    expect(formatExact(15378.459)).toBe('15,378.459');
    expect(formatExact(115.285)).toBe('115.285');
  });
});
