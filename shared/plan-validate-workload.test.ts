import { describe, expect, it } from 'vitest';
import { validatePlan } from './plan-validate.js';

function plan(cls: Record<string, unknown>): unknown {
  return { schema: 'loadfleet.plan/v1', name: 'w', seed: 1, duration_s: 60, classes: [{ name: 'c', ...cls }] };
}
const POISSON = { model: 'poisson', phases: [{ start_s: 0, duration_s: 60, rate_per_s: 1 }] };
const TRACE = { model: 'trace', trace: { file: 't.jsonl', format: 'mooncake' } };

function problems(cls: Record<string, unknown>): string[] {
  const r = validatePlan(plan(cls));
  return r.ok ? [] : r.problems;
}

describe('plan validation of real-workload fields', () => {
  it.each([
    [{ distribution: 'uniform', min: 10, max: 20 }, []],
    [{ distribution: 'uniform', min: 20, max: 10 }, ['classes[0].prompt.input_tokens.max: must be >= min (20)']],
    [{ distribution: 'normal', mean: 100, stddev: 10, min: 50, max: 150 }, []],
    [{ distribution: 'normal', mean: 100, stddev: -1 }, ['classes[0].prompt.input_tokens.stddev: must be >= 0']],
    [{ distribution: 'lognormal', mu: 6, sigma: 0.5 }, []],
    [{ distribution: 'lognormal', mu: 6, sigma: 0.5, p: 1 }, ['classes[0].prompt.input_tokens.p: unknown key']],
    [
      {
        distribution: 'histogram',
        buckets: [
          [100, 1],
          [200, 3],
        ],
      },
      [],
    ],
    [{ distribution: 'histogram', buckets: [[100, 0]] }, ['classes[0].prompt.input_tokens.buckets[0][1]: must be > 0']],
    [
      { distribution: 'histogram', buckets: [] },
      ['classes[0].prompt.input_tokens.buckets: must be a non-empty array of [tokens, weight] pairs'],
    ],
    [
      { distribution: 'zipf' },
      ['classes[0].prompt.input_tokens.distribution: must be one of "uniform", "normal", "lognormal", "histogram"'],
    ],
    ['100', ['classes[0].prompt.input_tokens: must be a positive integer or a distribution object']],
  ])('input_tokens %j → %j', (input_tokens, expected) => {
    expect(problems({ prompt: { input_tokens, output_tokens: 5 }, load: POISSON })).toEqual(expected);
  });

  it('accepts a trace class without lengths or phases, fills its defaults, and refuses what does not belong', () => {
    const r = validatePlan(plan({ prompt: {}, load: TRACE }));
    expect(r.ok && r.plan.classes[0]!.load).toEqual({
      ...TRACE,
      phases: [],
      trace: { ...TRACE.trace, time_scale: 1, start_s: 0, block_tokens: 512 },
    });
    expect(problems({ prompt: {}, load: { ...TRACE, phases: [] } })).toEqual([]);
    expect(problems({ prompt: { input_tokens: 5 }, load: { ...TRACE, phases: [{ start_s: 0, duration_s: 1, rate_per_s: 1 }] } })).toEqual([
      'classes[0].prompt.input_tokens: not allowed here (the trace, dataset or session gives it)',
      'classes[0].load.phases: not allowed with model "trace" (the rows are the arrivals)',
    ]);
    expect(problems({ prompt: {}, load: { model: 'trace', trace: { file: 't', format: 'csv', block_tokens: 500 } } })).toEqual([
      'classes[0].load.trace.format: must be one of "mooncake", "azure", "burstgpt"',
      'classes[0].load.trace.block_tokens: must be a multiple of 16 (the KV cache block size)',
    ]);
    expect(problems({ prompt: { input_tokens: 5, output_tokens: 5 }, load: { ...POISSON, trace: TRACE.trace } })).toEqual([
      'classes[0].load.trace: only allowed with model "trace"',
    ]);
  });

  it('takes a dataset instead of input_tokens, with output_tokens as the fallback', () => {
    const dataset = { file: 'd.jsonl', format: 'jsonl' };
    expect(problems({ prompt: { dataset, output_tokens: 10 }, load: POISSON })).toEqual([]);
    expect(problems({ prompt: { dataset }, load: POISSON })).toEqual(['classes[0].prompt.output_tokens: is required']);
    expect(
      problems({ prompt: { dataset: { ...dataset, min_input_tokens: 9, max_input_tokens: 3 }, output_tokens: 1 }, load: POISSON }),
    ).toEqual(['classes[0].prompt.dataset.max_input_tokens: must be >= min_input_tokens (9)']);
  });

  it('refuses plan.inputs written by hand', () => {
    const r = validatePlan({ ...(plan({ prompt: { input_tokens: 5, output_tokens: 5 }, load: POISSON }) as object), inputs: {} });
    expect(r.ok ? [] : r.problems).toEqual(['inputs: unknown key']);
  });
});

describe('plan validation of sessions', () => {
  const SESSIONS = {
    model: 'sessions',
    phases: [{ start_s: 0, duration_s: 60, rate_per_s: 1 }],
    session: { turns: 3, think_time_s: 1, user_tokens: 64 },
  };
  it('accepts a session shape of numbers or distributions, and drops the default cache', () => {
    const r = validatePlan(plan({ prompt: { output_tokens: 8 }, load: SESSIONS }));
    expect(r.ok ? [] : r.problems).toEqual([]);
    expect(r.ok && r.plan.classes[0]!.prompt).toEqual({ output_tokens: 8, ignore_eos: true });
    const dist = {
      ...SESSIONS,
      session: {
        turns: { distribution: 'uniform', min: 1, max: 5 },
        think_time_s: { distribution: 'uniform', min: 0.5, max: 2 },
        user_tokens: { distribution: 'lognormal', mu: 4, sigma: 0.5 },
      },
    };
    expect(problems({ prompt: { output_tokens: 8 }, load: dist })).toEqual([]);
  });
  it('refuses what a session cannot use', () => {
    expect(
      problems({
        prompt: { input_tokens: 5, output_tokens: 8, cache: 'shared' },
        load: { ...SESSIONS, session: { turns: 0, think_time_s: { distribution: 'uniform', min: 2, max: 1 } } },
      }),
    ).toEqual([
      // Within a class: the shape problems first (a missing key before a wrong value), then the rules.
      'classes[0].load.session.user_tokens: is required',
      'classes[0].load.session.turns: must be >= 1',
      'classes[0].load.session.think_time_s.max: must be >= min (2)',
      'classes[0].prompt.cache: not allowed with model "sessions" (each turn re-sends its history)',
      'classes[0].prompt.input_tokens: not allowed here (the trace, dataset or session gives it)',
    ]);
    expect(problems({ prompt: { input_tokens: 5, output_tokens: 8 }, load: { ...POISSON, session: SESSIONS.session } })).toEqual([
      'classes[0].load.session: only allowed with model "sessions"',
    ]);
  });
});

describe('plans that cannot be judged are refused', () => {
  const SESSIONS = {
    model: 'sessions',
    phases: [{ start_s: 0, duration_s: 60, rate_per_s: 1 }],
    session: { turns: 3, think_time_s: 1, user_tokens: 64 },
  };
  it('refuses slo.basis "intended" on a sessions class, with the path and why', () => {
    expect(problems({ prompt: { output_tokens: 8 }, load: SESSIONS, slo: { ttft_p95_ms: 500, basis: 'intended' } })).toEqual([
      'classes[0].slo.basis: "intended" cannot judge a sessions class (only a session\'s first turn has an intended send time; later turns follow the previous answer); use "sent"',
    ]);
    expect(problems({ prompt: { output_tokens: 8 }, load: SESSIONS, slo: { ttft_p95_ms: 500, basis: 'sent' } })).toEqual([]);
  });

  it('refuses prompt.canary on every per-request class, and keeps it on a calibrated one', () => {
    const why = 'canaries need a calibrated class of identical requests';
    expect(problems({ prompt: { input_tokens: 16, output_tokens: 8, canary: true }, load: POISSON })).toEqual([]);
    expect(
      problems({ prompt: { input_tokens: { distribution: 'uniform', min: 10, max: 20 }, output_tokens: 8, canary: true }, load: POISSON }),
    ).toEqual([
      `classes[0].prompt.canary: not allowed with a length distribution (each request has its own length, so no calibrated prompt): ${why}`,
    ]);
    expect(
      problems({ prompt: { input_tokens: 16, output_tokens: { distribution: 'uniform', min: 1, max: 9 }, canary: true }, load: POISSON }),
    ).toEqual([
      `classes[0].prompt.canary: not allowed with a length distribution (each request has its own length, so no calibrated prompt): ${why}`,
    ]);
    expect(problems({ prompt: { dataset: { file: 'd.jsonl', format: 'jsonl' }, output_tokens: 8, canary: true }, load: POISSON })).toEqual([
      `classes[0].prompt.canary: not allowed with a dataset (each record gives its own prompt): ${why}`,
    ]);
    expect(problems({ prompt: { canary: true }, load: TRACE })).toEqual([
      `classes[0].prompt.canary: not allowed with model "trace" (each row gives its own prompt): ${why}`,
    ]);
    expect(problems({ prompt: { output_tokens: 8, canary: true }, load: SESSIONS })).toEqual([
      `classes[0].prompt.canary: not allowed with model "sessions" (each turn's prompt is its conversation so far): ${why}`,
    ]);
  });
});
