import { describe, expect, it } from 'vitest';
import type { Plan } from './plan.js';
import { buildSchedule } from './schedule.js';
import { ownsOrdinal, shareLabel, splitInteger, subShare, takeStripe } from './shares.js';

const plan: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'shares',
  seed: 7,
  duration_s: 30,
  classes: [
    {
      name: 'a',
      prompt: { input_tokens: 8, output_tokens: 4 },
      load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 30, rate_per_s: 20 }] },
    },
    {
      name: 'b',
      prompt: { input_tokens: 8, output_tokens: 4 },
      load: { model: 'constant-rate', phases: [{ start_s: 5, duration_s: 10, rate_per_s: 7 }] },
    },
    {
      name: 'c',
      prompt: { input_tokens: 8, output_tokens: 4 },
      load: {
        model: 'concurrency',
        phases: [{ start_s: 0, duration_s: 20, concurrency: { pattern: 'noisy-sinusoidal', center: 13, amplitude: 9, period_s: 7 } }],
      },
    },
  ],
};

describe('shares', () => {
  it('splits every integer total exactly, for N = 1..16 and any class rotation', () => {
    for (let n = 1; n <= 16; n++) {
      for (let total = 0; total <= 100; total++) {
        for (let cls = 0; cls < 4; cls++) {
          let sum = 0;
          for (let i = 0; i < n; i++) {
            const v = splitInteger(total, { index: i, count: n }, cls);
            expect(v === Math.floor(total / n) || v === Math.ceil(total / n)).toBe(true);
            sum += v;
          }
          expect(sum).toBe(total);
        }
      }
    }
  });

  it('gives every arrival to exactly one agent, so the stripes union to the global schedule (N = 1..16)', () => {
    const schedule = buildSchedule(plan);
    for (let n = 1; n <= 16; n++) {
      schedule.classes.forEach((cls, ci) => {
        const seen = new Array<number>(cls.arrivalsNs.length).fill(0);
        const union: number[] = [];
        for (let i = 0; i < n; i++) {
          const stripe = takeStripe(cls, { index: i, count: n }, ci);
          stripe.requestIndices.forEach((idx, k) => {
            seen[idx]!++;
            expect(stripe.arrivalsNs[k]).toBe(cls.arrivalsNs[idx]);
            union.push(stripe.arrivalsNs[k]!);
          });
        }
        expect(seen.every((c) => c === 1)).toBe(true);
        expect(union.sort((x, y) => x - y)).toEqual(Array.from(cls.arrivalsNs));
      });
    }
  });

  it('splits closed-loop concurrency so the agents sum to the target at every step', () => {
    const schedule = buildSchedule(plan);
    const c = schedule.classes[2]!;
    expect(c.concurrency.length).toBeGreaterThan(5);
    for (let n = 1; n <= 16; n++) {
      const stripes = Array.from({ length: n }, (_, i) => takeStripe(c, { index: i, count: n }, 2));
      c.concurrency.forEach((step, k) => {
        expect(stripes.reduce((s, st) => s + st.concurrency[k]!.value, 0)).toBe(step.value);
      });
    }
  });

  it("splits a share over worker threads exactly: the parts' stripes union to the share's (N = 1..8, W = 1..6)", () => {
    const schedule = buildSchedule(plan);
    for (let n = 1; n <= 8; n++) {
      for (let w = 1; w <= 6; w++) {
        for (let i = 0; i < n; i++) {
          const share = { index: i, count: n };
          schedule.classes.forEach((cls, ci) => {
            const whole = takeStripe(cls, share, ci);
            const parts = Array.from({ length: w }, (_, p) => takeStripe(cls, subShare(share, p, w), ci));
            expect(parts.flatMap((p) => p.requestIndices).sort((a, b) => a - b)).toEqual(whole.requestIndices);
            whole.concurrency.forEach((step, k) => {
              expect(parts.reduce((sum, p) => sum + p.concurrency[k]!.value, 0)).toBe(step.value);
            });
          });
          for (let total = 0; total <= 3 * n * w; total++) {
            const viaParts = Array.from({ length: w }, (_, p) => splitInteger(total, subShare(share, p, w), 1)).reduce((a, b) => a + b, 0);
            expect(viaParts).toBe(splitInteger(total, share, 1));
          }
        }
      }
    }
  });

  it('labels shares as fractions and rotates ownership by class', () => {
    expect(shareLabel({ index: 2, count: 8 })).toBe('1/8');
    expect(ownsOrdinal(0, { index: 0, count: 4 }, 0)).toBe(true);
    expect(ownsOrdinal(0, { index: 1, count: 4 }, 1)).toBe(true);
  });
});
