// sweep.json, analysis.json and comparison.json as their writers build them pass their published
// JSON Schemas (ajv, an independent validator) and their one reader; a broken file is refused with
// every problem at its path. (run.json is checked the same way on a real run in test/core.test.ts.)
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { sweepDocument } from '../coordinator/sweep/sweep-json.js';
import { stringifyExact } from '../shared/json.js';
import type { AnalysisJson, ComparisonJson, SweepResultJson } from '../shared/result-schemas.js';
import { rngFromKey } from '../shared/rng.js';
import { readAnalysisJson, readComparisonJson, readRunFile, readSweepJson } from '../shared/run-read.js';
import { buildAnalysis } from './analysis/build.js';
import { comparisonJson } from './compare/command.js';
import { compareRuns } from './compare/figures.js';
import { logAr, runOf, windowOf } from './compare/simulate.test-kit.js';
import { runClass, runJson } from './run-json.test-kit.js';

const SCHEMAS = fileURLToPath(new URL('../examples/schemas/', import.meta.url));
const ajv = new Ajv({ strict: true, allErrors: true });
const validator = (name: string) => ajv.compile(JSON.parse(readFileSync(join(SCHEMAS, `${name}.v1.schema.json`), 'utf8')));
const dir = () => mkdtempSync(join(tmpdir(), 'lf-result-files-'));

function written(name: string, doc: unknown): string {
  const d = dir();
  writeFileSync(join(d, name), `${stringifyExact(doc, 2)}\n`);
  return d;
}

describe('the results files against their published schemas', () => {
  it('sweep.json: a finished sweep of four stages', async () => {
    const doc: SweepResultJson = sweepDocument({
      sweepId: 's1',
      sweep: {
        schema: 'loadfleet.sweep/v1',
        name: 'cap',
        plan: 'p.json',
        class: 'rt',
        scale: 'rate',
        strategy: { type: 'stages', values: [2, 4] },
        stage_duration_s: 6,
        warmup_s: 1,
      },
      sweepFile: '/x/s.json',
      planFile: '/x/p.json',
      background: [],
      slo: { ttft_p95_ms: 450 },
      agents: 1,
      startedAt: new Date(0),
      finishedAt: new Date(60_000),
      stages: [],
      stop: { rule: 'done', reason: 'every value measured' },
      coordinator: { host: 'h', pid: 1 },
      resumed: [],
    });
    const validate = validator('loadfleet.sweep-result');
    expect(validate(doc) ? [] : validate.errors).toEqual([]);
    expect((await readSweepJson(written('sweep.json', doc))).status).toBe('completed');
    const { bracket: _, ...broken } = doc;
    expect(validate({ ...broken, status: 'done' })).toBe(false);
    await expect(readSweepJson(written('sweep.json', { ...broken, status: 'done' }))).rejects.toMatchObject({
      code: 'LF_ARTIFACT_INVALID',
      details: ['status: must be one of "running", "interrupted", "aborted", "completed"', 'bracket: is required'],
    });
  });

  it('analysis.json: the seed experiment re-analysed', async () => {
    const seed = JSON.parse(readFileSync(new URL('../test/fixtures/interference-analysis.json', import.meta.url), 'utf8'));
    const arms = ['realtime only', 'realtime with batch already running'];
    const doc: AnalysisJson = buildAnalysis({
      experiment: {
        name: seed.experiment,
        business_question: seed.business_question,
        compare: { metric: 'realtime_surge_p95_ttft_ms', baseline: arms[0]!, treatment: arms[1]! },
        gates: { repeat_spread_max: 1.5 },
        arms: arms.map((name) => ({ name })),
      } as never,
      planName: 'batch-interference',
      target: 'engine-sim',
      classes: ['realtime', 'batch'],
      windows: ['surge'],
      rows: seed.runs,
      runChecks: {},
    });
    const validate = validator('loadfleet.analysis');
    expect(validate(doc) ? [] : validate.errors).toEqual([]);
    expect((await readAnalysisJson(written('analysis.json', doc))).run_count).toBe(seed.runs.length);
    await expect(readAnalysisJson(written('analysis.json', { ...doc, run_count: 'six' }))).rejects.toMatchObject({
      details: ['run_count: must be a number'],
    });
  });

  it('comparison.json: two one-run sides', async () => {
    const c = compareRuns(
      [runOf('a', windowOf(logAr(400, 0.3, rngFromKey('a'), 100)))],
      [runOf('b', windowOf(logAr(400, 0.3, rngFromKey('b'), 130)))],
      {
        confidence: 0.95,
        falseAlarm: 0.05,
        resamples: 200,
        relativeThreshold: 0.05,
        successThreshold: 0.01,
        seed: 't',
      },
    );
    const side = { label: 'x', runs: [], dirs: ['/x'] };
    const doc: ComparisonJson = comparisonJson(
      c,
      side,
      side,
      { confidence: 0.95, falseAlarm: 0.05, resamples: 200, relativeThreshold: 0.05, successThreshold: 0.01, seed: 't' },
      [],
    );
    const validate = validator('loadfleet.comparison');
    expect(validate(JSON.parse(JSON.stringify(doc))) ? [] : validate.errors).toEqual([]);
    const read = await readComparisonJson(written('comparison.json', doc));
    expect(read.classes['rt']?.['all']?.find((f) => f.figure === 'ttft_p95_ms')?.gating).toBe(true);
  });

  it('run.json: the reader takes a failed run and a result, and refuses a file of another kind', async () => {
    const validate = validator('loadfleet.run');
    const result = runJson({ classes: { chat: runClass({ requests: 2, completed: 2 }) } });
    expect(validate(JSON.parse(stringifyExact(result))) ? [] : validate.errors).toEqual([]);
    // Aborted before its start instant (agents that did not arm): it finished before it started.
    const early = runJson({ status: 'aborted', status_reason: 'aborted before any load was sent', wall_clock_ms: -255.637 });
    expect(validate(JSON.parse(stringifyExact(early))) ? [] : validate.errors).toEqual([]);
    expect((await readRunFile(written('run.json', early))).status).toBe('aborted');
    const failed = {
      schema: 'loadfleet.run/v1',
      run_id: 'f',
      status: 'failed',
      status_reason: 'the target did not start',
      error: { code: 'LF_TARGET_START_FAILED', message: 'the target did not start' },
      started_at: '2026-12-07T00:00:00.000Z',
      failed_at: '2026-12-07T00:00:01.000Z',
      plan: { schema: 'loadfleet.plan/v1', classes: [] },
      agents: [{ agent_id: 'a1', host: 'h', state: 'joined', detail: null }],
      requests: 0,
      field_definitions: {},
    };
    expect(validate(failed) ? [] : validate.errors).toEqual([]);
    expect((await readRunFile(written('run.json', failed))).status).toBe('failed');
    const err = await readRunFile(written('run.json', { schema: 'loadfleet.sweep-result/v1' })).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'LF_ARTIFACT_INVALID', exitCode: 2 });
    expect((err as { details: string[] }).details[0]).toBe('schema: must be "loadfleet.run/v1"');
  });
});
