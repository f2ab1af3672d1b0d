// Per-request workloads end to end on 2 agents against engine-sim: length distributions (open and
// closed loop), a JSONL dataset, a ShareGPT file drawn without replacement, and an Azure CSV trace.
// Every ok request must have exactly the lengths its index was given, whichever agent sent it.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { azureCsv, synthMooncake, synthPromptsJsonl, synthShareGpt } from '../scripts/trace-synth.js';
import { recordWords } from '../shared/dataset-parse.js';
import { lengthAt } from '../shared/lengths.js';
import type { LengthDistribution, Plan } from '../shared/plan.js';
import { buildSchedule } from '../shared/schedule.js';
import { attachWorkloadInputs, resolveWorkloadPaths } from '../shared/workload-files.js';
import { onlyRunDir, readRequests, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';

const LOGNORMAL: LengthDistribution = { distribution: 'lognormal', mu: 5, sigma: 0.6, min: 8, max: 2000 };
const HISTOGRAM: LengthDistribution = {
  distribution: 'histogram',
  buckets: [
    [4, 1],
    [16, 2],
    [32, 1],
  ],
};
const UNIFORM: LengthDistribution = { distribution: 'uniform', min: 20, max: 60 };

const PLAN: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'e2e-workloads',
  seed: 9,
  duration_s: 5,
  drain_timeout_s: 10,
  classes: [
    {
      name: 'dist',
      prompt: { input_tokens: LOGNORMAL, output_tokens: HISTOGRAM },
      load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 5, rate_per_s: 20 }] },
    },
    {
      name: 'closed',
      prompt: { input_tokens: UNIFORM, output_tokens: 4 },
      load: { model: 'concurrency', phases: [{ start_s: 0, duration_s: 4, concurrency: 2 }] },
    },
    {
      name: 'jsonl',
      prompt: { dataset: { file: 'prompts.jsonl', format: 'jsonl' }, output_tokens: 6 },
      load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 5, rate_per_s: 8 }] },
    },
    {
      name: 'sharegpt',
      prompt: { dataset: { file: 'sharegpt.json', format: 'sharegpt', replacement: false }, output_tokens: 5, cache: 'shared' },
      load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 4.75, rate_per_s: 4 }] },
    },
    {
      name: 'azure',
      prompt: {},
      load: { model: 'trace', phases: [], trace: { file: 'azure.csv', format: 'azure', time_scale: 0.1, limit: 40 } },
    },
  ],
};

describe('per-request workloads on 2 agents', () => {
  const work = tempDir();
  let run: any;
  let rows: any[];
  let local: Plan;

  beforeAll(async () => {
    writeFileSync(join(work, 'prompts.jsonl'), synthPromptsJsonl(30, 2));
    writeFileSync(join(work, 'sharegpt.json'), synthShareGpt(19, 2));
    writeFileSync(join(work, 'azure.csv'), azureCsv(synthMooncake({ rows: 60, seed: 4, ratePerS: 2 })));
    const file = writePlan(work, PLAN);
    const out = join(work, 'out');
    const r = await runCoordinator([
      '--agents',
      '2',
      '--plan',
      file,
      '--out',
      out,
      '--quiet',
      '--sim-arg=--ttft-ms=20',
      '--sim-arg=--itl-ms=2',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const dir = onlyRunDir(out);
    run = readRunJson(dir);
    rows = readRequests(dir);
    // The plan as run: its records counted on the target and the vocabulary its prompts were built from.
    const attached = await attachWorkloadInputs(resolveWorkloadPaths(PLAN, work));
    local = { ...attached, prompt_calibration: run.plan.prompt_calibration, prompt_vocabulary: run.plan.prompt_vocabulary };
  });

  const ok = (cls: string): any[] => rows.filter((r) => r.class === cls && r.status === 'ok');

  it('sends the global schedule exactly, hashed with the per-request lengths and records', () => {
    const schedule = buildSchedule(local);
    expect(run.schedule_sha256).toBe(schedule.sha256);
    expect(run.offered_schedule_matches).toBe(true);
    expect(run.failed).toBe(0);
    for (const [i, cls] of PLAN.classes.entries()) {
      if (cls.name === 'closed') continue;
      expect(rows.filter((r) => r.class === cls.name).length, cls.name).toBe(schedule.classes[i]!.arrivalsNs.length);
    }
    expect(
      run.data_quality.checks.filter((c: any) => ['request_shape', 'stream_integrity'].includes(c.name)).map((c: any) => c.status),
    ).toEqual(['pass', 'pass']);
  });

  it('gives every request its own drawn lengths, open and closed loop', () => {
    expect(ok('dist').length).toBeGreaterThan(60);
    for (const r of ok('dist')) {
      expect(r.prompt_tokens).toBe(lengthAt(LOGNORMAL, 9, 'dist', 'input_tokens', r.request_index));
      expect(r.completion_tokens).toBe(lengthAt(HISTOGRAM, 9, 'dist', 'output_tokens', r.request_index));
    }
    expect(ok('closed').length).toBeGreaterThan(10);
    for (const r of ok('closed')) expect(r.prompt_tokens).toBe(lengthAt(UNIFORM, 9, 'closed', 'input_tokens', r.request_index));
  });

  it('sends dataset records as drawn: their words (+ the unique head), their output_tokens or the fallback', () => {
    const schedule = buildSchedule(local).classes[2]!;
    const records = local.inputs!.datasets.jsonl!;
    const v = run.plan.prompt_vocabulary;
    // engine-sim: one token a word and no template; the head is the opener and its head words.
    expect(v).toMatchObject({ method: 'server-tokenize', request_tokens: 0, opener_tokens: 1 });
    for (const r of ok('jsonl')) {
      const rec = records[schedule.requests!.records[r.request_index]!]!;
      expect(r.prompt_tokens).toBe(recordWords(rec) + 1 + v.head_words);
      expect(r.planned_prompt_tokens).toBe(r.prompt_tokens);
      expect(r.completion_tokens).toBe(rec.output_tokens ?? 6);
    }
  });

  it('walks a ShareGPT file without replacement: 19 requests over its 18 conversations, every one sent', () => {
    const schedule = buildSchedule(local).classes[3]!;
    expect(ok('sharegpt')).toHaveLength(19);
    expect(new Set(ok('sharegpt').map((r) => schedule.requests!.records[r.request_index])).size).toBe(18);
  });

  it('replays Azure rows with their context and generated tokens, and names every file with its SHA-256', () => {
    const trace = local.inputs!.traces.azure!;
    expect(ok('azure')).toHaveLength(40);
    for (const r of ok('azure')) {
      expect(r.prompt_tokens).toBe(trace[r.request_index]!.input_tokens);
      expect(r.completion_tokens).toBe(trace[r.request_index]!.output_tokens);
    }
    const sha = (f: string): string =>
      createHash('sha256')
        .update(readFileSync(join(work, f)))
        .digest('hex');
    expect(run.workload_files.map((f: any) => [f.class, f.kind, f.sha256, f.rows_in_file, f.rows_used])).toEqual([
      ['jsonl', 'dataset', sha('prompts.jsonl'), 30, 30],
      ['sharegpt', 'dataset', sha('sharegpt.json'), 19, 18],
      ['azure', 'trace', sha('azure.csv'), 60, 40],
    ]);
  });
});
