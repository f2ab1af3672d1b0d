import { describe, expect, it } from 'vitest';
import { usdPerHour } from './cost-schema.js';
import { validatePlan } from './plan-validate.js';

const PLAN = {
  schema: 'loadfleet.plan/v1',
  name: 'cost',
  seed: 1,
  duration_s: 10,
  classes: [
    {
      name: 'c',
      prompt: { input_tokens: 10, output_tokens: 5 },
      load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 10, rate_per_s: 1 }] },
    },
  ],
};

function problems(cost: unknown): string[] {
  const r = validatePlan({ ...PLAN, cost });
  return r.ok ? [] : r.problems;
}

describe('plan cost', () => {
  it('accepts a deployment price, a per-accelerator price with its count, or accelerators alone', () => {
    expect(problems({ usd_per_hour: 98.32, accelerators: { type: 'H100-80GB', count: 8 } })).toEqual([]);
    expect(problems({ usd_per_accelerator_hour: 2.5, accelerators: { type: 'H100', count: 4 } })).toEqual([]);
    expect(problems({ usd_per_hour: 12 })).toEqual([]);
    expect(problems({ accelerators: { type: 'L4', count: 1 } })).toEqual([]);
  });

  it('reports every bad field with its JSON path', () => {
    expect(problems({ usd_per_hour: 0, accelerators: { type: '', count: 1.5 }, price: 3 })).toEqual([
      'cost.price: unknown key',
      'cost.usd_per_hour: must be > 0',
      'cost.accelerators.type: must not be empty',
      'cost.accelerators.count: must be an integer',
    ]);
  });

  it('refuses two prices, a per-accelerator price without a count, and an empty cost', () => {
    expect(problems({ usd_per_hour: 10, usd_per_accelerator_hour: 1, accelerators: { type: 'x', count: 2 } })).toEqual([
      'cost: must set only one of "usd_per_hour" (the whole deployment) and "usd_per_accelerator_hour"',
    ]);
    expect(problems({ usd_per_accelerator_hour: 1 })).toEqual([
      'cost.accelerators: is required with usd_per_accelerator_hour (the hour is the price × accelerators.count)',
    ]);
    expect(problems({})).toEqual(['cost: must set usd_per_hour, usd_per_accelerator_hour or accelerators (an empty cost says nothing)']);
  });

  it('prices the hour of the whole deployment either way', () => {
    expect(usdPerHour({ usd_per_hour: 98.32 })).toBe(98.32);
    expect(usdPerHour({ usd_per_accelerator_hour: 2.5, accelerators: { type: 'H100', count: 8 } })).toBe(20);
    expect(usdPerHour({ accelerators: { type: 'H100', count: 8 } })).toBeNull();
    expect(usdPerHour(undefined)).toBeNull();
  });
});
