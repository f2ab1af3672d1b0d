import { describe, expect, it } from 'vitest';
import type { Plan } from '../../shared/plan.js';
import { validatePlan } from '../../shared/plan-validate.js';
import type { Sweep } from '../../shared/sweep.js';
import { checkBudget, FIRST_OVERHEAD_S } from './budget.js';
import type { Departures } from './departures.js';
import { countDeparture } from './departures.js';
import { buildStagePlan } from './stage-plan.js';

const plan = (
  validatePlan({
    schema: 'loadfleet.plan/v1',
    name: 'p',
    seed: 5,
    duration_s: 60,
    drain_timeout_s: 30,
    classes: [
      {
        name: 'rt',
        prompt: { input_tokens: 10, output_tokens: 5 },
        load: { model: 'poisson', phases: [{ start_s: 4, duration_s: 10, rate: { pattern: 'constant', value: 1 } }] },
        slo: { ttft_p95_ms: 300, success_rate_min: 0.99 },
      },
      {
        name: 'batch',
        prompt: { input_tokens: 10, output_tokens: 5 },
        load: {
          model: 'poisson',
          phases: [
            { start_s: 0, duration_s: 12, rate_per_s: 1 },
            { start_s: 12, duration_s: 30, rate_per_s: 2 },
            { start_s: 50, duration_s: 10, rate_per_s: 3 },
          ],
        },
      },
    ],
    windows: [
      { name: 'early', start_s: 0, end_s: 10 },
      { name: 'late', start_s: 30, end_s: 60 },
      { name: 'measure', start_s: 0, end_s: 5 },
    ],
  }) as { ok: true; plan: Plan }
).plan;

const sweep: Sweep = {
  schema: 'loadfleet.sweep/v1',
  name: 's',
  plan: 'p.json',
  class: 'rt',
  scale: 'rate',
  strategy: { type: 'stages', values: [1, 2] },
  stage_duration_s: 20,
  warmup_s: 3,
  slo: { ttft_p95_ms: 150 },
};

describe('buildStagePlan', () => {
  it('scales the one phase to the end of the stage, clips the background, measures after the warm-up', () => {
    const { plan: p, measure } = buildStagePlan(plan, sweep, 7.5, 2, 12);
    expect(validatePlan(p).ok).toBe(true);
    expect(measure).toEqual({ start_s: 7, end_s: 20 });
    expect(p).toMatchObject({ name: 'p-stage3', seed: 7, duration_s: 20, drain_timeout_s: 12 });
    expect(p.classes[0]!.load.phases).toEqual([{ start_s: 4, duration_s: 16, rate_per_s: 7.5 }]);
    // The sweep's SLO overrides the plan's per field; the rest of the plan's SLO stays.
    expect(p.classes[0]!.slo).toEqual({ ttft_p95_ms: 150, success_rate_min: 0.99 });
    expect(p.classes[1]!.load.phases).toEqual([
      { start_s: 0, duration_s: 12, rate_per_s: 1 },
      { start_s: 12, duration_s: 8, rate_per_s: 2 },
    ]);
    expect(p.windows).toEqual([
      { name: 'early', start_s: 0, end_s: 10 },
      { name: 'measure', start_s: 7, end_s: 20 },
    ]);
  });
  it('scales a concurrency the same way', () => {
    const closed: Plan = {
      ...plan,
      classes: [{ ...plan.classes[0]!, load: { model: 'concurrency', phases: [{ start_s: 0, duration_s: 10, concurrency: 2 }] } }],
    };
    const { plan: p } = buildStagePlan(closed, { ...sweep, scale: 'concurrency' }, 16, 0, 30);
    expect(p.classes[0]!.load.phases).toEqual([{ start_s: 0, duration_s: 20, concurrency: 16 }]);
    expect(p.drain_timeout_s).toBe(30);
  });
});

describe('checkBudget', () => {
  it('without a budget every stage fits with the plan drain', () => {
    expect(checkBudget(20, 1e6, [], null, 30)).toEqual({ fits: true, drainCapS: 30 });
  });
  it('assumes the first overhead, then the largest seen; caps the drain to the slack', () => {
    expect(FIRST_OVERHEAD_S).toBe(10);
    expect(checkBudget(20, 0, [], 100, 30)).toEqual({ fits: true, drainCapS: 30 });
    expect(checkBudget(20, 60, [5, 8], 100, 30)).toEqual({ fits: true, drainCapS: 12 }); // 40 left − 20 − 8
    expect(checkBudget(20, 75, [5, 8], 100, 30)).toEqual({
      fits: false,
      reason: 'the next stage needs about 28 s (20 s + 8 s start-up and shut-down) but only 25 s of time_budget_s 100 s are left',
    });
  });
});

describe('countDeparture', () => {
  it('counts successful requests of the class that finished in the window, whatever their arrival', () => {
    const acc: Departures = { requests: 0, completionTokens: 0 };
    const rows = [
      { class: 'rt', status: 'ok', done_unix_ns: 1500, completion_tokens: 5 }, // arrived before the window: counts
      { class: 'rt', status: 'ok', done_unix_ns: 999, completion_tokens: 5 }, // before
      { class: 'rt', status: 'ok', done_unix_ns: 2000, completion_tokens: 5 }, // end is exclusive
      { class: 'rt', status: 'timeout', done_unix_ns: 1500, completion_tokens: 3 },
      { class: 'batch', status: 'ok', done_unix_ns: 1500, completion_tokens: 5 },
      { class: 'rt', status: 'ok', done_unix_ns: 1000, completion_tokens: 7 },
    ];
    for (const r of rows) countDeparture(acc, r, 'rt', 1000, 2000);
    expect(acc).toEqual({ requests: 2, completionTokens: 12 });
  });
});
