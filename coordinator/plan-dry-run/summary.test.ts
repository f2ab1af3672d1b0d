// The dry run's numbers by hand: 10 s of 4 req/s (100 prompt tokens, 20-token replies at an assumed
// 250 ms TTFT and 40 tokens/s) on 2 agents, and the stages a sweep would run.
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../shared/plan.js';
import { buildSchedule } from '../../shared/schedule.js';
import type { Sweep } from '../../shared/sweep.js';
import { dryRun, sweepStagePlans, sweepValues } from './summary.js';

const PLAN = {
  schema: 'loadfleet.plan/v1',
  name: 'dry',
  seed: 3,
  duration_s: 10,
  classes: [
    {
      name: 'rt',
      prompt: { input_tokens: 100, output_tokens: 20 },
      load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 10, rate_per_s: 4 }] },
    },
  ],
} as Plan;

const OPTS = { policy: 'refuse' as const, limits: { maxElu: 0.7, maxSloShare: 0.1 }, speed: { ttftMs: 250, tokensPerS: 40 } };

describe('dry run', () => {
  it('states the run’s schedule hash, requests and tokens per class and agent, peaks at the assumed speed', () => {
    const fleet = [1, 2].map((i) => ({ id: `agent-${i}`, figures: null, workers: 1 }));
    const r = dryRun(PLAN, fleet, OPTS);
    expect(r.schedule_sha256).toBe(buildSchedule(PLAN).sha256);
    expect(r.classes.rt).toMatchObject({
      requests: 40,
      requests_per_agent: [20, 20],
      prompt_tokens: 4000,
      peak_starts_per_s: 4,
      peak_streams: 3,
    });
    expect(r.classes.rt!.calibration).toMatch(/^count 100 prompt tokens on the embedded engine-sim's \/tokenize/);
    expect(r.per_agent.map((a) => [a.requests, a.peak_starts_per_s, a.peak_chunks_per_s, a.peak_streams, a.prompt_tokens])).toEqual([
      [20, 2, 40, 2, 2000],
      [20, 2, 40, 2, 2000],
    ]);
    expect(r.prompt_tokens).toBe(4000);
    // Without self-test figures there is nothing to project.
    expect(r.headroom).toBeNull();
  });

  it('lists the stages a sweep would run if each passed', () => {
    const base = { scale: 'rate', stage_duration_s: 10, warmup_s: 2, class: 'rt' } as Sweep;
    expect(sweepValues({ ...base, strategy: { type: 'geometric', start: 1, factor: 2, max: 10 } } as Sweep).values).toEqual([1, 2, 4, 8]);
    expect(
      sweepValues({ ...base, stop: { max_value: 5 }, strategy: { type: 'geometric', start: 1, factor: 2, max: 10 } } as Sweep).values,
    ).toEqual([1, 2, 4]);
    expect(
      sweepValues({ ...base, scale: 'concurrency', strategy: { type: 'geometric', start: 1, factor: 1.2, max: 4 } } as Sweep).values,
    ).toEqual([1, 2, 3, 4]);
    expect(sweepValues({ ...base, strategy: { type: 'bisect', pass: 2, fail: 20, resolution: 1 } } as Sweep).values).toEqual([2, 20]);
    const stages = sweepStagePlans(PLAN, { ...base, strategy: { type: 'stages', values: [2, 6] } } as Sweep).stages;
    // Each stage runs the scaled class at its value for the stage's 10 s.
    expect(stages.map((s) => dryRun(s.plan, [{ id: 'a', figures: null, workers: 1 }], OPTS).classes.rt!.requests)).toEqual([20, 60]);
  });
});
