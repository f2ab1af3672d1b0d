import { describe, expect, it } from 'vitest';
import type { ProbeSample } from '../../shared/clock.js';
import { feasibleLine } from './feasible-line.js';
import { driftKnown, PRE_START_PROBES } from './pre-start.js';

// An agent 2 ms ahead at our instant 0, drifting `ppm`; a probe at our t1 with legs up and down (ns).
const probe = (t1: number, up: number, down: number, ppm: number): ProbeSample => {
  const t2 = t1 + up + 2e6 + (t1 + up) * ppm * 1e-6;
  return { t1: BigInt(Math.round(t1)), t2: BigInt(Math.round(t2)), t3: BigInt(Math.round(t2)), t4: BigInt(Math.round(t1 + up + down)) };
};

describe('feasibleLine', () => {
  it('keeps the true line within its bounds whatever the legs, and is not pulled by one-sided stalls', () => {
    let seed = 11;
    const rnd = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    // 16 probes over 4 s, 0.1 ms legs, every other one stalled on the way out by up to 8 ms.
    const ps = Array.from({ length: 16 }, (_, i) => probe(i * 250e6, 0.1e6 + (i % 2 ? rnd() * 8e6 : 0), 0.1e6, 300));
    const f = feasibleLine(ps)!;
    expect(Math.abs(f.slope * 1e6 - 300)).toBeLessThanOrEqual(f.slopeHalfRange * 1e6);
    expect(f.slopeHalfRange * 1e6).toBeLessThan(60);
    // Its offset 3 s past the last probe (the start), against the truth.
    expect(Math.abs(f.at(BigInt(7e9)) - (2e6 + 7e9 * 300e-6))).toBeLessThan(0.25e6);
    expect(ps.length).toBeGreaterThanOrEqual(PRE_START_PROBES);
    expect(driftKnown(ps)).toBe(true);
  });

  it('does not claim a drift it cannot know: wide bounds leave a wide slope range', () => {
    const ps = Array.from({ length: 16 }, (_, i) => probe(i * 250e6, 3e6, 3e6, 0));
    const f = feasibleLine(ps)!;
    expect(f.slopeHalfRange * 1e6).toBeGreaterThan(1000);
    expect(driftKnown(ps)).toBe(false);
  });

  it('admits no line through bounds a clock step breaks', () => {
    const ps = [probe(0, 0.1e6, 0.1e6, 0), probe(1e9, 0.1e6, 0.1e6, 0), { ...probe(2e9, 0.1e6, 0.1e6, 0) }];
    ps[1] = { ...ps[1]!, t2: ps[1]!.t2 + 5_000_000n, t3: ps[1]!.t3 + 5_000_000n };
    expect(feasibleLine(ps)).toBeNull();
  });
});
