import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadPlanFile } from '../../shared/plan-load.js';
import { validatePlan } from '../../shared/plan-validate.js';
import type { Sweep } from '../../shared/sweep.js';
import { checkSweepAgainstPlan } from '../../shared/sweep-validate.js';
import { buildStagePlan } from './stage-plan.js';

const example = (name: string): string => fileURLToPath(new URL(`../../examples/${name}.plan.json`, import.meta.url));

describe('sweeps over real workloads', () => {
  const sweep = {
    schema: 'loadfleet.sweep/v1' as const,
    name: 's',
    plan: 'p.json',
    class: 'chat',
    scale: 'rate' as const,
    strategy: { type: 'stages' as const, values: [1, 2] },
    stage_duration_s: 10,
    warmup_s: 2,
  };
  it('scales a sessions class through its arrival rate; a trace class has no phase to scale', async () => {
    const plan = await loadPlanFile(example('sessions'));
    expect(checkSweepAgainstPlan({ ...sweep, class: 'agentic' } as Sweep, plan)).toEqual([]);
    const stage = buildStagePlan(plan, { ...sweep, class: 'agentic' } as Sweep, 2, 0, 10);
    expect(stage.plan.classes[0]!.load).toMatchObject({ model: 'sessions', phases: [{ start_s: 0, duration_s: 10, rate_per_s: 2 }] });
    expect(validatePlan(stage.plan).ok).toBe(true);
    const trace = await loadPlanFile(example('trace-replay'));
    expect(checkSweepAgainstPlan({ ...sweep, class: 'mooncake' } as Sweep, trace)).toEqual([
      'class: class "mooncake" must have exactly one phase to scale (it has 0)',
    ]);
  });
});
