// The published JSON Schemas are exactly what the definitions generate, and every example under
// examples/ names its schema and passes both an independent JSON Schema validator (ajv) and
// loadfleet's own loader.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { loadExperimentFile } from './experiment-load.js';
import { validateExperimentDoc } from './experiment-validate.js';
import { schemaFiles } from './file-schemas.js';
import { loadPlanFile } from './plan-load.js';
import { validatePlan } from './plan-validate.js';
import { loadSweepFile } from './sweep-load.js';
import { validateSweep } from './sweep-validate.js';

const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));
const FILES = schemaFiles();

describe('examples/schemas/', () => {
  it.each(Object.keys(FILES))('%s is what the definitions generate (npm run examples:generate)', (name) => {
    expect(readFileSync(join(EXAMPLES, 'schemas', name), 'utf8')).toBe(FILES[name]);
  });

  it('holds the generated files and nothing else', () => {
    expect(readdirSync(join(EXAMPLES, 'schemas')).sort()).toEqual(Object.keys(FILES).sort());
  });
});

const LOADERS: Record<string, (path: string) => Promise<unknown>> = {
  plan: loadPlanFile,
  experiment: loadExperimentFile,
  sweep: loadSweepFile,
};
const DOC_CHECKS: Record<string, (doc: unknown) => { ok: boolean; problems?: string[] }> = {
  plan: validatePlan,
  experiment: validateExperimentDoc,
  sweep: validateSweep,
};
const EXAMPLE_FILES = readdirSync(EXAMPLES).filter((f) => /\.(plan|experiment|sweep)\.json$/.test(f));
const kindOf = (file: string): string => file.split('.').at(-2)!;

describe('example files', () => {
  const ajv = new Ajv({ strict: true, allErrors: true });
  const validators = Object.fromEntries(Object.keys(LOADERS).map((kind) => [kind, ajv.compile(schemaOf(kind))]));

  it('there are plans, experiments and sweeps', () => {
    expect(new Set(EXAMPLE_FILES.map(kindOf))).toEqual(new Set(Object.keys(LOADERS)));
  });

  it.each(EXAMPLE_FILES)('%s names its schema and passes it (ajv) and loadfleet’s loader', async (file) => {
    const kind = kindOf(file);
    const doc = JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8'));
    expect(doc.$schema).toBe(`./schemas/loadfleet.${kind}.v1.schema.json`);
    const validate = validators[kind]!;
    expect(validate(doc) ? [] : validate.errors).toEqual([]);
    await expect(LOADERS[kind]!(join(EXAMPLES, file))).resolves.toBeDefined();
  });

  it.each(EXAMPLE_FILES)('%s with a misspelt key is refused by both', (file) => {
    const doc = { ...JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')), nmae: 'x' };
    expect(validators[kindOf(file)]!(doc)).toBe(false);
    expect(DOC_CHECKS[kindOf(file)]!(doc).problems).toEqual(['nmae: unknown key (did you mean "name"?)']);
  });

  it('a plan the schema refuses, loadfleet refuses at the same path', () => {
    const plan = JSON.parse(readFileSync(join(EXAMPLES, 'minimal.plan.json'), 'utf8'));
    plan.classes[0].load.phases[0].rate_per_s = 0;
    plan.classes[0].prompt.cache = 'none';
    const validate = validators['plan']!;
    expect(validate(plan)).toBe(false);
    const schemaPaths = new Set(validate.errors!.map((e) => e.instancePath));
    expect(schemaPaths).toContain('/classes/0/load/phases/0/rate_per_s');
    expect(schemaPaths).toContain('/classes/0/prompt/cache');
    const result = validatePlan(plan);
    expect(result.ok ? [] : result.problems).toEqual([
      'classes[0].prompt.cache: must be one of "unique", "shared"',
      'classes[0].load.phases[0].rate_per_s: must be > 0',
    ]);
  });
});

function schemaOf(kind: string): object {
  return JSON.parse(FILES[`loadfleet.${kind}.v1.schema.json`]!);
}
