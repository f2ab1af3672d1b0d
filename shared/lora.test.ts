import { describe, expect, it } from 'vitest';
import { LoraPicker } from './lora.js';
import type { Plan } from './plan.js';
import { buildSchedule } from './schedule.js';

const weights = [
  { model: 'a', weight: 3 },
  { model: 'b', weight: 1 },
];

describe('LoRA adapter assignment', () => {
  it('is exact over whole cycles, seeded, and at most a weight short in a partial cycle', () => {
    const p = new LoraPicker(1, 'c', weights);
    const counts = (n: number) => [0, 1].map((k) => Array.from({ length: n }, (_, i) => p.at(i)).filter((x) => x === k).length);
    expect(counts(400)).toEqual([300, 100]);
    const [a, b] = counts(402);
    expect(a! + b!).toBe(402);
    expect(a).toBeGreaterThanOrEqual(300);
    expect(new LoraPicker(1, 'c', weights).modelAt(7)).toBe(p.modelAt(7));
    const order = (seed: number) => Array.from({ length: 40 }, (_, i) => new LoraPicker(seed, 'c', weights).at(i)).join('');
    expect(order(1)).not.toBe(order(2));
  });

  it('is part of the schedule hash', () => {
    const plan = (w: number): Plan => ({
      schema: 'loadfleet.plan/v1',
      name: 'x',
      seed: 1,
      duration_s: 2,
      drain_timeout_s: 1,
      max_error_share: 0.01,
      classes: [
        {
          name: 'c',
          adapters: [
            { model: 'a', weight: w },
            { model: 'b', weight: 1 },
          ],
          prompt: { input_tokens: 4, output_tokens: 4 },
          load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 2, rate_per_s: 4 }] },
        },
      ],
    });
    expect(buildSchedule(plan(3)).sha256).not.toBe(buildSchedule(plan(2)).sha256);
    expect(buildSchedule(plan(3)).classes[0]!.adapters!.perRequest).toHaveLength(8);
  });
});
