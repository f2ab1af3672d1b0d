import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadPlanFile } from './plan-load.js';
import { buildSchedule } from './schedule.js';
import { attachWorkloadInputs } from './workload-files.js';

const example = (name: string): string => fileURLToPath(new URL(`../examples/${name}.plan.json`, import.meta.url));

describe('plans that name trace and dataset files', () => {
  it.each([
    ['trace-replay', [['trace', 300, 300]]],
    [
      'datasets',
      [
        ['dataset', 60, 41],
        ['dataset', 20, 19],
      ],
    ],
    ['length-distributions', []],
    ['sessions', []],
  ])('loads examples/%s.plan.json, its files relative to the plan', async (name, files) => {
    const plan = await attachWorkloadInputs(await loadPlanFile(example(name)));
    expect((plan.inputs?.files ?? []).map((f) => [f.kind, f.rows_in_file, f.rows_used])).toEqual(files);
    expect(buildSchedule(plan).sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a bad trace before any load: exit 2, the file and its line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-plan-'));
    writeFileSync(join(dir, 't.jsonl'), '{"timestamp": 10, "input_length": 5, "output_length": 1}\n{"timestamp": 3, "input_length": 5}\n');
    const plan = {
      schema: 'loadfleet.plan/v1',
      name: 'p',
      seed: 1,
      duration_s: 5,
      classes: [{ name: 'c', prompt: {}, load: { model: 'trace', trace: { file: 't.jsonl', format: 'mooncake' } } }],
    };
    writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan));
    await expect(loadPlanFile(join(dir, 'plan.json'))).rejects.toMatchObject({
      code: 'LF_PLAN_INVALID',
      exitCode: 2,
      details: [`classes[0].load.trace.file: ${join(dir, 't.jsonl')} line 2: "output_length" must be an integer >= 1`],
    });
  });
});
