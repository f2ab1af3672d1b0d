import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, ExitCode, LoadfleetError, PlanInvalidError } from './errors.js';
import { loadPlanFile, parsePlanText } from './plan-load.js';

const MINIMAL_YAML = `# a comment, which JSON cannot have
schema: loadfleet.plan/v1
name: minimal
seed: 1
duration_s: 10
classes:
  - name: steady
    prompt: { input_tokens: 256, output_tokens: 32 }
    load:
      model: constant-rate
      phases:
        - { start_s: 0, duration_s: 10, rate_per_s: 2 }
`;

const MINIMAL_JSON = {
  schema: 'loadfleet.plan/v1',
  name: 'minimal',
  seed: 1,
  duration_s: 10,
  classes: [
    {
      name: 'steady',
      prompt: { input_tokens: 256, output_tokens: 32 },
      load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 10, rate_per_s: 2 }] },
    },
  ],
};

function problemsOf(text: string, sourceName: string): readonly string[] {
  try {
    parsePlanText(text, sourceName);
  } catch (err) {
    if (err instanceof PlanInvalidError) return err.details;
    throw err;
  }
  throw new Error('expected a PlanInvalidError');
}

describe('parsePlanText', () => {
  it('parses JSON (even after a BOM) and fills defaults', () => {
    const plan = parsePlanText(`\uFEFF${JSON.stringify(MINIMAL_JSON)}`, 'x.json');
    expect(plan.name).toBe('minimal');
    expect(plan.drain_timeout_s).toBe(30);
  });

  it('parses YAML by file name', () => {
    expect(parsePlanText(MINIMAL_YAML, 'plans/minimal.yaml').classes[0]?.name).toBe('steady');
    expect(parsePlanText(MINIMAL_YAML, 'minimal.YML').duration_s).toBe(10);
  });

  it('parses YAML when the text does not look like JSON', () => {
    expect(parsePlanText(MINIMAL_YAML, '<stdin>').name).toBe('minimal');
  });

  it('throws PlanInvalidError with every validation problem and the source name', () => {
    const text = MINIMAL_YAML.replace('seed: 1', 'seed: -1').replace('rate_per_s: 2', 'rate_per_s: 0');
    let caught: unknown;
    try {
      parsePlanText(text, 'bad.yaml');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(PlanInvalidError);
    const err = caught as PlanInvalidError;
    expect(err.code).toBe(ErrorCode.PLAN_INVALID);
    expect(err.exitCode).toBe(ExitCode.INVALID_INPUT);
    expect(err.message).toBe('bad.yaml is invalid (2 problems)');
    expect(err.details).toEqual(['seed: must be >= 0', 'classes[0].load.phases[0].rate_per_s: must be > 0']);
  });

  it('reports a JSON syntax error with line and column', () => {
    expect(problemsOf('{\n  "name": "x",\n}', 'p.json')).toEqual([
      '$: invalid JSON at line 3, column 1: Expected double-quoted property name',
    ]);
  });

  it('reports a JSON syntax error without position as it is', () => {
    const [problem] = problemsOf('{"name": }', 'p.json');
    expect(problem).toMatch(/^\$: invalid JSON(?: at line 1, column 10)?: Unexpected token/);
  });

  it('reports YAML syntax errors with line and column', () => {
    expect(problemsOf('name: x\nseed: a: b\n', 'p.yaml')).toEqual([
      '$: invalid YAML at line 2, column 7: Nested mappings are not allowed in compact mappings',
    ]);
  });

  it('reports a duplicate YAML key', () => {
    expect(problemsOf('name: x\nname: y\n', 'p.yml')).toEqual(['$: invalid YAML at line 2, column 1: Map keys must be unique']);
  });

  it('reports a root that is not an object', () => {
    expect(problemsOf('just text', 'p')).toEqual(['$: must be an object']);
    expect(problemsOf('', 'p.yaml')).toEqual(['$: must be an object']);
  });
});

describe('loadPlanFile', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loadfleet-plan-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the example plans', async () => {
    const plan = await loadPlanFile(fileURLToPath(new URL('../examples/batch-interference.plan.json', import.meta.url)));
    expect(plan.classes.map((c) => c.name)).toEqual(['realtime', 'batch']);
    expect((await loadPlanFile(fileURLToPath(new URL('../examples/minimal.plan.json', import.meta.url)))).name).toBe('minimal');
  });

  it('loads a YAML file', async () => {
    const path = join(dir, 'minimal.yaml');
    await writeFile(path, MINIMAL_YAML);
    expect((await loadPlanFile(path)).name).toBe('minimal');
  });

  it('names the file in a validation error', async () => {
    const path = join(dir, 'bad.json');
    await writeFile(path, '{}');
    await expect(loadPlanFile(path)).rejects.toThrow(`${path} is invalid (5 problems)`);
  });

  it('reports an unreadable file as LF_PLAN_UNREADABLE with exit code 2', async () => {
    const path = join(dir, 'missing.json');
    const err: unknown = await loadPlanFile(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LoadfleetError);
    expect(err).toMatchObject({ code: ErrorCode.PLAN_UNREADABLE, exitCode: ExitCode.INVALID_INPUT });
    expect((err as Error).message).toContain(`cannot read plan ${path}: ENOENT`);
  });
});
