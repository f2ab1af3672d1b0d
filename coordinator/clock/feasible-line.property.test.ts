// Property: whatever the agent's clock (offset up to ±1 s, drift up to ±1,000 ppm) and its probes
// (legs each way on their own, 20 µs to 10 ms, some stalled up to 50 ms; the agent holding each for
// up to 1 ms between T2 and T3; spaced 10 ms to 5 s), the true offset lies inside what the line
// through the probes' bounds states, at every probe's instants, and its drift inside its range; a
// held-out probe's residual lies within its bound of the truth.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ProbeSample } from '../../shared/clock.js';
import { feasibleLine } from './feasible-line.js';
import { heldOutResidual } from './held-out.js';

// Generated cases per property (LOADFLEET_SOAK=1: ten times as many).
const RUNS = process.env.LOADFLEET_SOAK === '1' ? 3000 : 300;
// Stamps are whole ns: each bound is exact to 2 ns.
const ROUNDING_NS = 2;

const leg = fc.oneof(
  { weight: 4, arbitrary: fc.double({ min: 20e3, max: 10e6, noNaN: true }) },
  { weight: 1, arbitrary: fc.double({ min: 10e6, max: 50e6, noNaN: true }) },
);
const probe = fc.record({
  gapNs: fc.double({ min: 10e6, max: 5e9, noNaN: true }),
  upNs: leg,
  downNs: leg,
  holdNs: fc.double({ min: 0, max: 1e6, noNaN: true }),
});
const agent = fc.record({
  offsetMs: fc.double({ min: -1000, max: 1000, noNaN: true }),
  driftPpm: fc.double({ min: -1000, max: 1000, noNaN: true }),
  probes: fc.array(probe, { minLength: 2, maxLength: 60 }),
});
type Agent = typeof agent extends fc.Arbitrary<infer A> ? A : never;

const T0 = 1_796_000_000_000_000_000n;
const theta = (a: Agent, t: number): number => a.offsetMs * 1e6 + a.driftPpm * 1e-6 * t;
const at = (t: number): bigint => T0 + BigInt(Math.round(t));

/** The probes as they would be read: our T1 and T4, the agent's T2 and T3 (ns); their instants from T0. */
function probes(a: Agent): { sample: ProbeSample; instants: number[] }[] {
  let t = 0;
  const b = a.driftPpm * 1e-6;
  return a.probes.map((p) => {
    t += p.gapNs;
    const r2 = t + p.upNs;
    const t2 = r2 + theta(a, r2);
    const r3 = r2 + p.holdNs / (1 + b);
    const t4 = r3 + p.downNs;
    const sample: ProbeSample = { t1: at(t), t2: at(t2), t3: at(t2 + p.holdNs), t4: at(t4) };
    return { sample, instants: [t, (t + t4) / 2, t4] };
  });
}

describe("the agents' clock line, generated clocks", () => {
  it(`holds the true offset inside its stated uncertainty and the drift inside its range (${RUNS} runs)`, () => {
    let lines = 0;
    fc.assert(
      fc.property(agent, (a) => {
        const ps = probes(a);
        const f = feasibleLine(ps.map((p) => p.sample));
        if (!f) return;
        lines++;
        for (const p of ps)
          for (const t of p.instants) {
            const truth = theta(a, t);
            expect(Math.abs(f.at(at(t)) - truth)).toBeLessThanOrEqual(f.uncertaintyNs + ROUNDING_NS);
            const [lo, hi] = f.rangeAt(at(t));
            expect(truth).toBeGreaterThanOrEqual(lo - ROUNDING_NS);
            expect(truth).toBeLessThanOrEqual(hi + ROUNDING_NS);
          }
        expect(Math.abs(f.slope * 1e6 - a.driftPpm)).toBeLessThanOrEqual(f.slopeHalfRange * 1e6 + 1e-3);
      }),
      { numRuns: RUNS, seed: 20261207 },
    );
    console.log(`agent clock property: a line in ${lines} of ${RUNS} generated clocks (the rest: drift not bounded within ±1%)`);
    expect(lines).toBeGreaterThan(RUNS / 2);
  });

  it(`a held-out probe's residual lies within its bound of the truth (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(agent, fc.double({ min: -5e6, max: 5e6, noNaN: true }), (a, correctionNs) => {
        for (const { sample, instants } of probes(a)) {
          const r = heldOutResidual({ ...sample, correctionNs }, 0, T0);
          if (!r) throw new Error('no residual');
          const truth = theta(a, instants[1]!) - correctionNs;
          expect(Math.abs(r.residual_ns - truth)).toBeLessThanOrEqual(r.bound_ns + ROUNDING_NS);
        }
      }),
      { numRuns: RUNS, seed: 20261208 },
    );
  });
});
