import { describe, expect, it } from 'vitest';
import { LoadfleetError } from '../../shared/errors.js';
import type { Plan } from '../../shared/plan.js';
import { acceleratorsFlag, withCostFlags } from './flags.js';

const plan = { name: 'p', cost: { usd_per_accelerator_hour: 3, accelerators: { type: 'A100', count: 2 } } } as unknown as Plan;

describe('cost flags', () => {
  it('parses TYPE:COUNT, the count after the last colon', () => {
    expect(acceleratorsFlag('H100-80GB:8')).toEqual({ type: 'H100-80GB', count: 8 });
    expect(acceleratorsFlag('gpu:a:2')).toEqual({ type: 'gpu:a', count: 2 });
    for (const bad of ['H100', 'H100:0', ':4', 'H100:1.5']) expect(() => acceleratorsFlag(bad)).toThrow(/TYPE:COUNT/);
  });

  it('replaces the part of the plan cost a flag names and keeps the rest', () => {
    expect(withCostFlags(plan, {})).toBe(plan);
    expect(withCostFlags(plan, { costPerHour: 50 }).cost).toEqual({ usd_per_hour: 50, accelerators: { type: 'A100', count: 2 } });
    expect(withCostFlags(plan, { accelerators: { type: 'H100', count: 8 } }).cost).toEqual({
      usd_per_accelerator_hour: 3,
      accelerators: { type: 'H100', count: 8 },
    });
    expect(withCostFlags({ name: 'q' } as unknown as Plan, { costPerHour: 7 }).cost).toEqual({ usd_per_hour: 7 });
  });

  it('refuses a combination that breaks a cost rule, with its JSON path', () => {
    expect(() => withCostFlags({ name: 'q' } as unknown as Plan, { costPerAcceleratorHour: 2 })).toThrow(LoadfleetError);
    try {
      withCostFlags({ name: 'q' } as unknown as Plan, { costPerAcceleratorHour: 2 });
    } catch (err) {
      expect((err as LoadfleetError).details).toEqual([
        'cost.accelerators: is required with usd_per_accelerator_hour (the hour is the price × accelerators.count)',
      ]);
    }
    expect(() => withCostFlags(plan, { costPerHour: 1, costPerAcceleratorHour: 1 })).toThrow(LoadfleetError);
  });
});
