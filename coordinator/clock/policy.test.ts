import { describe, expect, it } from 'vitest';
import type { OffsetLine } from '../../figures/clock-types.js';
import { domainResidualNs } from './policy.js';

// An agent whose offset was `atZero` at our instant 0 and drifts `ppm` against our clock.
const line = (atZero: number, ppm: number): OffsetLine => ({ slope: ppm * 1e-6, at: (now) => atZero + Number(now) * ppm * 1e-6 });

describe('domainResidualNs (a declared common clock domain, checked during the run)', () => {
  it("measures each agent from the median agent's fitted offset now, as at join", () => {
    // Two agents synchronised to one source (both 3 ms from our clock) and one 500 ppm fast.
    const lines = [line(3e6, 0), line(3e6, 0), line(3e6, 500)];
    const now = 20_000_000_000n; // 20 s in: the fast one is 10 ms ahead of the domain
    expect(domainResidualNs(lines, 2, now)).toBeCloseTo(10e6, 0);
    expect(domainResidualNs(lines, 0, now)).toBeCloseTo(0, 0);
    // Our own drift against the domain is not the agents' error: all three drifting alike are within it.
    const together = [line(3e6, 40), line(3e6, 40), line(3.1e6, 40)];
    expect(domainResidualNs(together, 2, now)).toBeCloseTo(0.1e6, 0);
  });

  it('has nothing to hold a lone agent, or one without a fit, against', () => {
    expect(domainResidualNs([line(0, 500)], 0, 10_000_000_000n)).toBeNull();
    expect(domainResidualNs([line(0, 500), null], 0, 10_000_000_000n)).toBeNull();
    expect(domainResidualNs([null, line(0, 0), line(0, 0)], 0, 10_000_000_000n)).toBeNull();
  });
});
