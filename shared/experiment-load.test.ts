// Experiment files: the examples load, and a bad file lists every problem with its path, including
// problems of the plan it names and of each arm's effective plan.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExperimentInvalidError, loadExperimentFile } from './experiment-load.js';
import { validateExperimentDoc } from './experiment-validate.js';
import { mergePatch } from './merge-patch.js';

const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));
const SHORT_PLAN = join(EXAMPLES, 'batch-interference-short.plan.json');

function experimentFile(doc: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'lf-exp-'));
  const path = join(dir, 'e.experiment.json');
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

const GOOD = {
  schema: 'loadfleet.experiment/v1',
  name: 'x',
  business_question: 'q?',
  plan: SHORT_PLAN,
  repeats: 2,
  arms: [
    { name: 'alone', classes: ['realtime'] },
    { name: 'with batch', overrides: { seed: 7 } },
  ],
  compare: { metric: 'realtime_surge_p95_ttft_ms', baseline: 'alone', treatment: 'with batch' },
};

async function problemsOf(doc: unknown): Promise<string[]> {
  const err = await loadExperimentFile(experimentFile(doc)).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ExperimentInvalidError);
  expect((err as ExperimentInvalidError).exitCode).toBe(2);
  return [...(err as ExperimentInvalidError).details];
}

describe('experiment files', () => {
  it('the examples load, with defaults and one plan per arm', async () => {
    for (const name of ['batch-interference', 'batch-interference-short']) {
      const loaded = await loadExperimentFile(join(EXAMPLES, `${name}.experiment.json`));
      expect(loaded.experiment.order).toBe('interleaved');
      expect(loaded.experiment.gates.repeat_spread_max).toBe(1.5);
      expect(loaded.armPlans.map((p) => p.classes.map((c) => c.name))).toEqual([['realtime'], ['realtime', 'batch']]);
    }
  });

  it('lists every problem: unknown keys, a missing plan, an unknown arm', async () => {
    const problems = await problemsOf({
      ...GOOD,
      plan: 'missing.plan.json',
      extra: 1,
      arms: [{ name: 'alone', colour: 'red' }, { name: 'b' }],
    });
    expect(problems).toEqual([
      'extra: unknown key',
      'arms[0].colour: unknown key',
      'compare.treatment: no arm is named "with batch" (arms: "alone", "b")',
      expect.stringMatching(/^plan: cannot read "missing\.plan\.json" \(ENOENT.*relative to the experiment file$/),
    ]);
  });

  it('checks arms against the plan: unknown classes, effective plans, the compared figure', async () => {
    const problems = await problemsOf({
      ...GOOD,
      ordr: 'blocked',
      arms: [
        { name: 'alone', classes: ['realtime', 'bacth'] },
        { name: 'with batch', overrides: { duration_s: 0, windows: null } },
      ],
      compare: { ...GOOD.compare, metric: 'realtime_surge_p95_ttft' },
    });
    expect(problems).toEqual([
      'ordr: unknown key (did you mean "order"?)',
      'arms[0].classes[1]: unknown class "bacth" (the plan has "realtime", "batch") (did you mean "batch"?)',
      'arms[1]: effective plan: duration_s: must be > 0',
    ]);
    const metricOnly = await problemsOf({ ...GOOD, compare: { ...GOOD.compare, metric: 'realtime_surge_p95_ttft' } });
    expect(metricOnly).toEqual([
      'compare.metric: "realtime_surge_p95_ttft" is not a figure of arm "alone" (did you mean "realtime_surge_p95_ttft_ms"?)',
      'compare.metric: "realtime_surge_p95_ttft" is not a figure of arm "with batch" (did you mean "realtime_surge_p95_ttft_ms"?)',
    ]);
  });

  it('accepts a budget figure as the compared figure', async () => {
    const loaded = await loadExperimentFile(
      experimentFile({ ...GOOD, compare: { ...GOOD.compare, metric: 'usd_per_million_output_tokens' } }),
    );
    expect(loaded.experiment.compare.metric).toBe('usd_per_million_output_tokens');
    expect(await problemsOf({ ...GOOD, compare: { ...GOOD.compare, metric: 'usd_per_million_output_token' } })).toContain(
      'compare.metric: "usd_per_million_output_token" is not a figure of arm "alone" (did you mean "usd_per_million_output_tokens"?)',
    );
  });

  it('reports the plan file’s own problems under plan', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-exp-'));
    writeFileSync(
      join(dir, 'p.json'),
      JSON.stringify({ schema: 'loadfleet.plan/v1', name: 'p', seed: 1, duration_s: 5, classes: [], typo: 1 }),
    );
    const problems = await problemsOf({ ...GOOD, plan: join(dir, 'p.json') });
    expect(problems).toEqual([
      `plan (${join(dir, 'p.json')}): typo: unknown key`,
      `plan (${join(dir, 'p.json')}): classes: must not be empty`,
    ]);
  });

  it('document rules', () => {
    const bad = validateExperimentDoc({
      ...GOOD,
      repeats: 0,
      order: 'random',
      gates: { repeat_spread_max: 0.5 },
      arms: [{ name: 'alone', classes: [] }, { name: 'alone' }],
      compare: { metric: 'm', baseline: 'alone', treatment: 'alone' },
    });
    expect(bad.ok ? [] : bad.problems).toEqual([
      'repeats: must be >= 1',
      'order: must be one of "interleaved", "blocked"',
      'arms[0].classes: must not be empty (an arm runs at least one class)',
      'arms[1].name: duplicate "alone" (first used by arms[0])',
      'compare.treatment: must name a different arm than baseline',
      'gates.repeat_spread_max: must be >= 1',
    ]);
  });

  it('overrides are a JSON merge patch', () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, d: [1, 2], e: 1 }, { a: { b: 3 }, d: [3], e: null })).toEqual({ a: { b: 3, c: 2 }, d: [3] });
  });
});
