import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadPlanFile } from '../../shared/plan-load.js';
import { validatePlan } from '../../shared/plan-validate.js';
import type { Sweep } from '../../shared/sweep.js';
import { checkSweepAgainstPlan } from '../../shared/sweep-validate.js';
import { attachWorkloadInputs } from '../../shared/workload-files.js';
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
      'scale: class "mooncake" replays a trace: use "speed"',
    ]);
    expect(checkSweepAgainstPlan({ ...sweep, class: 'agentic', scale: 'speed' } as Sweep, plan)).toEqual([
      'scale: "speed" scales a replayed trace; class "agentic" is model "sessions"',
    ]);
  });

  it("scales a trace through its speed: the stage replays it with time_scale = the plan's / value", async () => {
    const trace = await loadPlanFile(example('trace-replay'));
    const speed = { ...sweep, class: 'mooncake', scale: 'speed' } as Sweep;
    expect(checkSweepAgainstPlan(speed, trace)).toEqual([]);
    const stage = buildStagePlan(trace, speed, 2, 0, 10);
    expect(stage.plan.classes[0]!.load.trace).toMatchObject({ time_scale: 0.125 });
    expect(stage.measure).toEqual({ start_s: 2, end_s: 10 });
    expect(validatePlan(stage.plan).ok).toBe(true);
    // Twice the speed puts about twice the rows into the same 10 s (while the trace lasts).
    const rows = async (v: number) =>
      (await attachWorkloadInputs(buildStagePlan(trace, speed, v, 0, 10).plan)).inputs!.traces.mooncake!.length;
    const [quarter, half] = [await rows(0.25), await rows(0.5)];
    console.log(`rows in a 10 s stage: ${quarter} at 0.25× speed, ${half} at 0.5×`);
    expect(half / quarter).toBeGreaterThan(1.7);
    expect(half / quarter).toBeLessThan(2.3);
  });
});
