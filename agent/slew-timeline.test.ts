import { describe, expect, it } from 'vitest';
import { MAX_SLEW_PPM, SlewTimeline } from './slew-timeline.js';

describe('SlewTimeline', () => {
  it('slews without a step and recovers the raw reading from a stamp and its correction', () => {
    const t = new SlewTimeline();
    expect(t.at(1e9)).toBe(1e9);
    t.slew(1e9, 500); // 500 ppm from 1 s on
    t.slew(3e9, -200); // a rate change: continuous
    expect(t.at(3e9)).toBeCloseTo(3e9 - 1e6, 3);
    const raw = 4e9;
    const stamp = t.at(raw);
    // 2 s at 500 ppm (1 ms), then 1 s at −200 ppm (−0.2 ms).
    expect(t.correctionAtRaw(raw)).toBeCloseTo(0.8e6, 3);
    expect(stamp + t.correctionAt(stamp)).toBeCloseTo(raw, 3);
    // An instant before the current segment takes the value at its start (the change).
    expect(t.correctionAt(2e9)).toBeCloseTo(1e6, 3);
  });

  it('caps the rate and ignores a rate that is not a number', () => {
    const t = new SlewTimeline();
    t.slew(0, 1e6);
    expect(t.correctionAtRaw(1e9)).toBeCloseTo(MAX_SLEW_PPM * 1e3, 3);
    t.slew(1e9, Number.NaN);
    expect(t.correctionAtRaw(2e9)).toBeCloseTo(2 * MAX_SLEW_PPM * 1e3, 3);
  });
});
