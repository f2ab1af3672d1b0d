// The JSON Schemas published under examples/schemas/, generated from the same definitions that give
// the types and the validation (plan-schema.ts, experiment.ts, sweep.ts; run-schema.ts and
// result-schemas.ts for the results files: run.json, sweep.json, analysis.json, comparison.json),
// so the three cannot disagree. Written by `npm run examples:generate`; a unit test fails when the files are stale.
import { type TSchema, Type } from '@sinclair/typebox';
import { ExperimentFile } from './experiment.js';
import { DatasetSpec, lengthField, PlanFile, SessionSpec, TraceSpec } from './plan-schema.js';
import { AnalysisFile, ComparisonFile, SweepResultFile } from './result-schemas.js';
import { RunFile } from './run-schema.js';
import { SweepFile } from './sweep.js';
import { isObj } from './validate-kit.js';

const DRAFT = 'http://json-schema.org/draft-07/schema#';
const BASE = 'https://loadfleet.dev/schemas/';

// The files a plan's workload fields read: checked line by line by trace-parse.ts and
// dataset-parse.ts (so that each problem names its line); described here for editors and readers.
const MOONCAKE_ROW = Type.Object(
  {
    timestamp: Type.Number({ minimum: 0, description: "ms since the trace's first request" }),
    input_length: Type.Integer({ minimum: 1 }),
    output_length: Type.Integer({ minimum: 1 }),
    hash_ids: Type.Optional(Type.Array(Type.Integer({ minimum: 0 }), { description: 'one id per block_tokens block of the prompt' })),
  },
  { description: 'one line of a Mooncake trace (JSONL); rows sorted by timestamp' },
);

const DATASET_RECORD = Type.Object(
  {
    prompt: Type.Optional(Type.String({ minLength: 1 })),
    messages: Type.Optional(Type.Array(Type.Object({ role: Type.String(), content: Type.String() }), { minItems: 1 })),
    output_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { description: 'one line of a JSONL dataset', oneOf: [{ required: ['prompt'] }, { required: ['messages'] }] },
);

const SHAREGPT_FILE = Type.Array(Type.Object({ conversations: Type.Array(Type.Object({ from: Type.String(), value: Type.String() })) }), {
  description:
    'a ShareGPT-style file: the first human turn of each conversation is the prompt, the reply after it gives output_tokens (its words)',
});

const WORKLOAD = {
  title: 'loadfleet real-workload shapes',
  description:
    'The plan fields for real workloads (prompt.input_tokens / output_tokens as distributions, prompt.dataset, load.trace, load.session; as in loadfleet.plan.v1.schema.json) and the files they read. The validators also check what a schema cannot: max >= min, sorted trace timestamps, every problem with its file line.',
  $defs: {
    length: lengthField(
      'prompt.input_tokens / prompt.output_tokens: a fixed token count, or a distribution drawn per request from the seed (rounded, clamped to [min, max]; min defaults to 1)',
    ),
    trace: TraceSpec,
    dataset: DatasetSpec,
    session: SessionSpec,
    mooncakeRow: MOONCAKE_ROW,
    datasetRecord: DATASET_RECORD,
    sharegptFile: SHAREGPT_FILE,
  },
};

/** Each published schema file's name (under examples/schemas/) and its text. */
export function schemaFiles(): Record<string, string> {
  return {
    'loadfleet.plan.v1.schema.json': published('loadfleet.plan.v1', PlanFile),
    'loadfleet.experiment.v1.schema.json': published('loadfleet.experiment.v1', ExperimentFile),
    'loadfleet.sweep.v1.schema.json': published('loadfleet.sweep.v1', SweepFile),
    'loadfleet.workload.v1.schema.json': published('loadfleet.workload.v1', WORKLOAD),
    'loadfleet.run.v1.schema.json': published('loadfleet.run.v1', RunFile),
    'loadfleet.sweep-result.v1.schema.json': published('loadfleet.sweep-result.v1', SweepResultFile),
    'loadfleet.analysis.v1.schema.json': published('loadfleet.analysis.v1', AnalysisFile),
    'loadfleet.comparison.v1.schema.json': published('loadfleet.comparison.v1', ComparisonFile),
  };
}

// TypeBox keeps its own bookkeeping under symbols, which JSON.stringify leaves out.
function published(name: string, schema: TSchema | object): string {
  return `${JSON.stringify({ $schema: DRAFT, $id: `${BASE}${name}.schema.json`, ...schema }, asEnum, 2)}\n`;
}

// TypeBox writes a choice of strings as an anyOf of consts; `enum` says the same and reads better.
function asEnum(_key: string, v: unknown): unknown {
  if (!isObj(v) || !Array.isArray(v['anyOf'])) return v;
  const { anyOf, ...rest } = v as { anyOf: unknown[] };
  const consts = anyOf.map((b) => (isObj(b) && Object.keys(b).length === 2 && b['type'] === 'string' ? b['const'] : undefined));
  return consts.every((c) => typeof c === 'string') ? { ...rest, type: 'string', enum: consts } : v;
}
