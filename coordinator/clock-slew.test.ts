import { describe, expect, it } from 'vitest';
import type { ProbeSample } from '../shared/clock.js';
import { SLEW_HORIZON_S, slewStep } from './clock-slew.js';

// Probes of an agent whose clock runs `ppm` fast and sat `joinOffset` ahead at t = 0, 0.2 ms round trip.
function probes(count: number, ppm: number, joinOffset: number): ProbeSample[] {
  return Array.from({ length: count }, (_, i) => {
    const t1 = BigInt(i) * 1_000_000_000n;
    const agentNs = (t: bigint) => t + BigInt(Math.round(joinOffset + Number(t) * ppm * 1e-6));
    return { t1, t2: agentNs(t1 + 100_000n), t3: agentNs(t1 + 100_000n), t4: t1 + 200_000n };
  });
}

describe('slewStep', () => {
  it('waits for enough probes, then fits the drift and steers the error left away over the horizon', () => {
    expect(slewStep(probes(3, 500, 7e6), 7e6, 3_000_000_000n, 0)).toBeNull();
    const s = slewStep(probes(10, 500, 7e6), 7e6, 10_000_000_000n, 0)!;
    expect(s.driftPpm).toBeCloseTo(500, 3);
    // Ten seconds at 500 ppm: 5 ms ahead, none of it corrected yet.
    expect(s.errorNs).toBeCloseTo(5e6, -3);
    expect(s.ratePpm).toBeCloseTo(500 + (5e6 / (SLEW_HORIZON_S * 1e9)) * 1e6, 0);
    // Once the agent has corrected all of it, it is told the drift alone.
    const caught = slewStep(probes(10, 500, 7e6), 7e6, 10_000_000_000n, 5e6)!;
    expect(caught.errorNs).toBeCloseTo(0, -3);
    expect(caught.ratePpm).toBeCloseTo(500, 0);
  });

  it('simulated: an agent 500 ppm fast that follows the steps stays within 0.1 ms of our timeline after 15 s', () => {
    let applied = 0;
    let rate = 0;
    const errors: number[] = [];
    for (let t = 1; t <= 60; t++) {
      applied += rate * 1e-6 * 1e9; // one second at the rate it was told
      const s = slewStep(probes(t + 1, 500, 0), 0, BigInt(t) * 1_000_000_000n, applied);
      if (s) {
        rate = s.ratePpm;
        errors.push(Math.abs(s.errorNs));
      }
    }
    expect(Math.max(...errors.slice(15))).toBeLessThan(100_000);
    // Uncorrected, the same agent would be 30 ms ahead after a minute.
    expect(60 * 500e-6 * 1e9).toBe(30_000_000);
  });
});
