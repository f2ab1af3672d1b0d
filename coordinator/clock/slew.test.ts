import { describe, expect, it } from 'vitest';
import type { ProbeSample } from '../../shared/clock.js';
import { SLEW_HORIZON_S, slewStep } from './slew.js';

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
    expect(slewStep(probes(7, 500, 7e6), 7e6, 7_000_000_000n, 0)).toBeNull();
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

  it('simulated: an agent 500 ppm fast that follows the steps stays within 0.1 ms of our timeline after 20 s of steering', () => {
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
    expect(Math.max(...errors.slice(20))).toBeLessThan(100_000);
    // Uncorrected, the same agent would be 30 ms ahead after a minute.
    expect(60 * 500e-6 * 1e9).toBe(30_000_000);
  });

  it('simulated on a loaded machine: probes stalled by milliseconds, most of all at the start, do not steer the agent off', () => {
    // Seeded: each leg 0.1 ms + exp(0.3 ms), and stalled by exp(5 ms) on 90% of the first four
    // probes (the start: both ends busy) and 30% of the rest. The agent is 500 ppm fast and had
    // gained 1.5 ms between the join and the start.
    let seed = 7;
    const rnd = (): number => {
      seed ^= seed << 13;
      seed >>>= 0;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      seed >>>= 0;
      return seed / 4294967296;
    };
    const exp = (mean: number): number => -Math.log(1 - rnd()) * mean;
    const worst: number[] = [];
    for (let run = 0; run < 100; run++) {
      const ahead = (t: bigint): number => 1.5e6 + Number(t) * 500e-6;
      const ps: ProbeSample[] = [];
      let applied = 0;
      let rate = 0;
      let first: number | null = null;
      let max = 0;
      for (let t = 1; t <= 60; t++) {
        applied += rate * 1e3; // one second at the rate it was told
        const stalled = t <= 4 ? 0.9 : 0.3;
        const leg = (): number => 0.1e6 + exp(0.3e6) + (rnd() < stalled ? exp(5e6) : 0);
        const [up, down] = [leg(), leg()];
        const t1 = BigInt(t) * 1_000_000_000n;
        const t2 = t1 + BigInt(Math.round(up + ahead(t1)));
        ps.push({ t1, t2, t3: t2 + 50_000n, t4: t1 + BigInt(Math.round(up + down + 50_000)) });
        const s = slewStep(ps, 0, ps.at(-1)!.t4, applied);
        if (!s) continue;
        first ??= t;
        rate = Math.max(-5000, Math.min(5000, s.ratePpm));
        // The true distance (not the measured one) once steering has had 10 s.
        if (t - first >= 10) max = Math.max(max, Math.abs(ahead(ps.at(-1)!.t4) - applied));
      }
      worst.push(max);
    }
    worst.sort((a, b) => a - b);
    // The fit before (from four probes, the lower-delay half kept) gave p99 2.95 ms in this
    // simulation (max 5.9 ms); this one about 1.3 ms.
    console.log(`simulated loaded steering: true residual p50 ${worst[49]! / 1e6} ms, p99 ${worst[98]! / 1e6} ms`);
    expect(worst[98]!).toBeLessThan(2e6);
  });
});
