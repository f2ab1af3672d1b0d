// Property: for any seeded plan (open- and closed-loop load models, patterns) and any fleet of N
// agents, each striping its share over W worker threads, the shares split the global schedule
// exactly: every request is owned by exactly one agent (and one thread), at its global intended
// time; the per-agent counts sum to the total; concurrency targets split into integers that sum
// to the target at every step.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Plan } from './plan.js';
import { validatePlan } from './plan-validate.js';
import { arrivalsBetween, buildSchedule } from './schedule.js';
import { type Share, splitInteger, subShare, takeStripe } from './shares.js';

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;
/** The soak round's runs take ten times as long. */
const TIMEOUT_MS = SOAK > 1 ? 600_000 : undefined;

const rate = fc.double({ min: 0.2, max: 40, noNaN: true });
const pattern = fc.oneof(
  fc.record({ pattern: fc.constant('constant'), value: rate }),
  fc.record({ pattern: fc.constant('ramp'), from: fc.double({ min: 0, max: 40, noNaN: true }), to: rate }),
  fc.record(
    {
      pattern: fc.constant('noisy-sinusoidal'),
      center: rate,
      amplitude: fc.double({ min: 0, max: 30, noNaN: true }),
      period_s: fc.double({ min: 0.5, max: 20, noNaN: true }),
      noise: fc.double({ min: 0, max: 5, noNaN: true }),
      spike_probability: fc.double({ min: 0, max: 1, noNaN: true }),
    },
    { requiredKeys: ['pattern', 'center', 'amplitude', 'period_s'] },
  ),
);

/** Phases back to back with gaps, each up to 8 s: `load` fills in the load field per model. */
function phases<T>(load: fc.Arbitrary<T>, key: string): fc.Arbitrary<Record<string, unknown>[]> {
  return fc
    .array(fc.record({ gap: fc.integer({ min: 0, max: 3 }), len: fc.double({ min: 0.1, max: 8, noNaN: true }), load }), {
      minLength: 1,
      maxLength: 3,
    })
    .map((ps) => {
      let at = 0;
      return ps.map((p) => {
        const start = at + p.gap;
        at = start + p.len;
        return { start_s: start, duration_s: p.len, [key]: p.load };
      });
    });
}

const load = fc.oneof(
  phases(rate, 'rate_per_s').map((ps) => ({ model: 'constant-rate', phases: ps })),
  phases(rate, 'rate_per_s').map((ps) => ({ model: 'poisson', phases: ps })),
  phases(pattern, 'rate').map((ps) => ({ model: 'poisson', phases: ps })),
  phases(fc.integer({ min: 1, max: 40 }), 'concurrency').map((ps) => ({ model: 'concurrency', phases: ps })),
  phases(pattern, 'concurrency').map((ps) => ({ model: 'concurrency', phases: ps })),
);

const plan: fc.Arbitrary<Plan> = fc
  .record({ seed: fc.nat(), loads: fc.array(load, { minLength: 1, maxLength: 3 }) })
  .map(({ seed, loads }) => {
    const result = validatePlan({
      schema: 'loadfleet.plan/v1',
      name: 'shares-property',
      seed,
      duration_s: 40,
      classes: loads.map((l, i) => ({ name: `c${i}`, prompt: { input_tokens: 8, output_tokens: 4 }, load: l })),
    });
    if (!result.ok) throw new Error(`generated an invalid plan: ${result.problems.join('; ')}`);
    return result.plan;
  });

describe('the seeded schedule split (property)', () => {
  it(
    'any plan, seed, N agents and W threads: every request exactly once, counts and concurrency sum to the total',
    () => {
      fc.assert(
        fc.property(plan, fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 4 }), (p, n, w) => {
          const schedule = buildSchedule(p);
          expect(buildSchedule(p).sha256).toBe(schedule.sha256);
          schedule.classes.forEach((cls, ci) => {
            const total = cls.arrivalsNs.length;
            // The global schedule itself: ascending integer ns inside the plan (arrivalsBetween relies on the order).
            for (let k = 0; k < total; k++) {
              expect(Number.isInteger(cls.arrivalsNs[k])).toBe(true);
              if (k > 0) expect(cls.arrivalsNs[k]!).toBeGreaterThanOrEqual(cls.arrivalsNs[k - 1]!);
            }
            expect(arrivalsBetween(cls.arrivalsNs, 0, p.duration_s * 1e9)).toBe(total);
            const phaseSpans = p.classes[ci]!.load.phases.map((ph) => [ph.start_s * 1e9, (ph.start_s + ph.duration_s) * 1e9] as const);
            for (const t of cls.arrivalsNs)
              expect(phaseSpans.some(([from, to]) => t >= Math.round(from) && t <= Math.round(to))).toBe(true);
            const owner = new Array<number>(total).fill(-1);
            let counted = 0;
            const concurrencySum = cls.concurrency.map(() => 0);
            for (let i = 0; i < n; i++) {
              const share: Share = { index: i, count: n };
              const stripe = takeStripe(cls, share, ci);
              expect(stripe.arrivalsNs).toHaveLength(stripe.requestIndices.length);
              stripe.requestIndices.forEach((idx, k) => {
                expect(owner[idx], `request ${idx} of class ${ci} owned twice`).toBe(-1);
                owner[idx] = i;
                expect(stripe.arrivalsNs[k]).toBe(cls.arrivalsNs[idx]);
              });
              // The count the headroom estimate and the sampling stride assume is the stripe's own.
              expect(splitInteger(total, share, ci)).toBe(stripe.requestIndices.length);
              counted += splitInteger(total, share, ci);
              stripe.concurrency.forEach((s, k) => {
                expect(s.atNs).toBe(cls.concurrency[k]!.atNs);
                expect(Number.isInteger(s.value) && s.value >= 0).toBe(true);
                concurrencySum[k]! += s.value;
              });
              // The worker threads' parts of this share are exactly the share.
              const parts = Array.from({ length: w }, (_, t) => takeStripe(cls, subShare(share, t, w), ci));
              expect(parts.flatMap((x) => x.requestIndices).sort((a, b) => a - b)).toEqual(stripe.requestIndices);
              stripe.concurrency.forEach((s, k) => {
                expect(parts.reduce((sum, x) => sum + x.concurrency[k]!.value, 0)).toBe(s.value);
              });
            }
            expect(owner.every((o) => o >= 0)).toBe(true);
            expect(counted).toBe(total);
            expect(concurrencySum).toEqual(cls.concurrency.map((s) => s.value));
          });
        }),
        { numRuns: 250 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});
