import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Plan } from './plan.js';
import { validatePlan } from './plan-validate.js';
import { SWEEP_SCHEMA } from './sweep.js';
import { loadSweepFile, parseSweepText } from './sweep-load.js';
import { checkSweepAgainstPlan, validateSweep } from './sweep-validate.js';

const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));

const BASE = {
  schema: SWEEP_SCHEMA,
  name: 'unit',
  plan: 'p.json',
  class: 'rt',
  scale: 'rate',
  strategy: { type: 'bisect', pass: 1, fail: 9, resolution: 0.5 },
  stage_duration_s: 10,
  warmup_s: 2,
  stop: { max_failing_stages: 2, max_error_share: 0.1, max_value: 20, time_budget_s: 600 },
  slo: { ttft_p95_ms: 200, tpot_p95_ms: 50, success_rate_min: 0.99, basis: 'sent' },
};

const PLAN = validatePlan({
  schema: 'loadfleet.plan/v1',
  name: 'p',
  seed: 1,
  duration_s: 30,
  classes: [
    {
      name: 'rt',
      prompt: { input_tokens: 10, output_tokens: 5 },
      load: { model: 'poisson', phases: [{ start_s: 3, duration_s: 20, rate_per_s: 1 }] },
    },
    {
      name: 'bg',
      prompt: { input_tokens: 10, output_tokens: 5 },
      load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 30, rate_per_s: 1 }] },
    },
    {
      name: 'cl',
      prompt: { input_tokens: 10, output_tokens: 5 },
      load: { model: 'concurrency', phases: [{ start_s: 0, duration_s: 30, concurrency: 2 }] },
    },
    {
      name: 'wave',
      prompt: { input_tokens: 10, output_tokens: 5 },
      load: {
        model: 'poisson',
        phases: [{ start_s: 0, duration_s: 30, rate: { pattern: 'noisy-sinusoidal', center: 2, amplitude: 1, period_s: 5 } }],
      },
    },
  ],
});
const plan = (PLAN as { ok: true; plan: Plan }).plan;

function problems(input: unknown): string[] {
  const r = validateSweep(input);
  return r.ok ? [] : r.problems;
}

describe('validateSweep', () => {
  it('accepts a complete sweep and the three strategies', () => {
    expect(problems(BASE)).toEqual([]);
    expect(problems({ ...BASE, strategy: { type: 'stages', values: [1, 2, 4] } })).toEqual([]);
    expect(problems({ ...BASE, strategy: { type: 'geometric', start: 1, factor: 2, max: 16 } })).toEqual([]);
    expect(problems({ ...BASE, stop: undefined, slo: undefined })).toEqual([]);
  });

  it('reports every problem at once, each with its path', () => {
    const bad = {
      schema: 'loadfleet.sweep/v2',
      name: 'has space',
      class: 'rt',
      scale: 'velocity',
      strategy: { type: 'bisect', pass: 5, fail: 3, resolution: 0, extra: 1 },
      stage_duration_s: 5,
      warmup_s: 5,
      stop: { max_failing_stages: 0, max_error_share: 2, max_valeu: 3 },
      slo: { ttft_p95_ms: -1, success_rate_min: 1.5 },
      typo: true,
    };
    expect(problems(bad)).toEqual([
      'typo: unknown key',
      'schema: must be "loadfleet.sweep/v1"',
      'name: must use only letters, digits, ".", "_" and "-"',
      'plan: is required',
      'scale: must be one of "rate", "concurrency", "speed"',
      'warmup_s: must be < stage_duration_s (5), or nothing is measured',
      'stop.max_valeu: unknown key (did you mean "max_value"?)',
      'stop.max_failing_stages: must be >= 1',
      'stop.max_error_share: must be <= 1',
      'strategy.extra: unknown key',
      'strategy.resolution: must be > 0',
      'strategy.fail: must be > pass (5)',
      'slo.ttft_p95_ms: must be > 0',
      'slo.success_rate_min: must be <= 1',
    ]);
  });

  it('checks each strategy: rising stages, geometric bounds, concurrency integers, max_value', () => {
    expect(problems({ ...BASE, strategy: { type: 'stages', values: [2, 2, 30, 'x'] } })).toEqual([
      'strategy.values[1]: must be > the value before it (2)',
      'strategy.values[2]: must be <= stop.max_value (20)',
      'strategy.values[3]: must be a number',
    ]);
    expect(problems({ ...BASE, strategy: { type: 'stages', values: [] } })).toEqual(['strategy.values: must not be empty']);
    expect(problems({ ...BASE, strategy: { type: 'geometric', start: 30, factor: 1, max: 4 } })).toEqual([
      'strategy.factor: must be > 1',
      'strategy.max: must be >= start (30)',
      'strategy.start: must be <= stop.max_value (20)',
    ]);
    expect(problems({ ...BASE, scale: 'concurrency', strategy: { type: 'bisect', pass: 1.5, fail: 8, resolution: 0.5 } })).toEqual([
      'strategy.pass: must be an integer',
      'strategy.resolution: must be an integer',
    ]);
    expect(problems({ ...BASE, strategy: { type: 'bisect', pass: 1, fail: 30, resolution: 40 } })).toEqual([
      'strategy.resolution: must be < fail − pass (29), or there is nothing to search',
      'strategy.fail: must be <= stop.max_value (20)',
    ]);
    expect(problems({ ...BASE, strategy: { type: 'zigzag' } })).toEqual(['strategy.type: must be one of "stages", "geometric", "bisect"']);
    expect(problems([])).toEqual(['$: must be an object']);
  });
});

describe('checkSweepAgainstPlan', () => {
  const sweep = (over: object) => ({ ...BASE, ...over }) as never;
  it('accepts a matching class', () => {
    expect(checkSweepAgainstPlan(sweep({}), plan)).toEqual([]);
  });
  it('names a missing class and the ones there are', () => {
    expect(checkSweepAgainstPlan(sweep({ class: 'nope' }), plan)).toEqual([
      'class: no class "nope" in plan p.json (it has "rt", "bg", "cl", "wave")',
    ]);
  });
  it('refuses the wrong scale, a pattern phase and a warm-up past the stage', () => {
    expect(checkSweepAgainstPlan(sweep({ class: 'cl' }), plan)).toEqual([
      'scale: class "cl" is closed loop (model "concurrency"): use "concurrency"',
    ]);
    expect(checkSweepAgainstPlan(sweep({ scale: 'concurrency' }), plan)).toEqual([
      'scale: class "rt" is open loop (model "poisson"): use "rate"',
    ]);
    expect(checkSweepAgainstPlan(sweep({ class: 'wave' }), plan)).toEqual([
      'class: the phase of "wave" uses a "noisy-sinusoidal" pattern; a scaled phase needs rate_per_s, a constant rate or a constant concurrency',
    ]);
    expect(checkSweepAgainstPlan(sweep({ warmup_s: 7 }), plan)).toEqual([
      'warmup_s: the scaled phase starts at 3 s, so start + warmup_s (10 s) must be < stage_duration_s (10)',
    ]);
  });
});

describe('example sweep files', () => {
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.sweep.json'));
  it('there are the two examples', () => {
    expect(files.sort()).toEqual(['saturation-short.sweep.json', 'saturation.sweep.json']);
  });
  for (const f of files) {
    it(`${f} validates with its plan`, async () => {
      const loaded = await loadSweepFile(join(EXAMPLES, f));
      expect(loaded.sweep.class).toBe('realtime');
      expect(loaded.plan.classes.map((c) => c.name)).toContain('batch');
    });
  }
  it('a broken sweep file is refused before anything else, with its syntax position', async () => {
    await expect(parseSweepText('{"schema": ', 'x.json', dirname(EXAMPLES))).rejects.toMatchObject({ code: 'LF_SWEEP_INVALID' });
  });
});
