import { describe, expect, it } from 'vitest';
import { lateTickDetector } from './late-tick.js';

describe('lateTickDetector', () => {
  it('calls a tick late only when it comes more than two periods after the one before', () => {
    let now = 0;
    const late = lateTickDetector(1000, () => now);
    const at = (t: number): boolean => {
      now = t;
      return late();
    };
    expect(at(1000)).toBe(false);
    expect(at(2900)).toBe(false); // 1.9 periods: a slow loop, not a stall
    expect(at(5000)).toBe(true); // 2.1 periods: the loop was blocked
    expect(at(6000)).toBe(false); // the next tick judges again
    expect(at(13_000)).toBe(true);
    expect(at(14_000)).toBe(false);
  });

  it('measures the first tick from its creation', () => {
    let now = 50_000;
    const late = lateTickDetector(1000, () => now);
    now = 56_000;
    expect(late()).toBe(true);
  });
});
