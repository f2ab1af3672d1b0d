// The `loadfleet.experiment/v1` file format (../shared/spec/plan.md, "Experiment"), defined once:
// one plan, arms that vary it, repeats of each, and the comparison the analysis answers. The types,
// the published JSON Schema and the shape check come from this definition; the rules across fields
// are experiment-validate.ts, the file loading experiment-load.ts.
import { type Static, Type } from '@sinclair/typebox';
import type { Plan } from './plan.js';
import { nameField } from './plan-schema.js';
import { closed, fileRoot, oneOf, say } from './schema-problems.js';

/** The only experiment schema this version reads. */
export const EXPERIMENT_SCHEMA = 'loadfleet.experiment/v1';

/** Defaults for the optional fields. */
export const EXPERIMENT_DEFAULTS = { order: 'interleaved', repeat_spread_max: 1.5 } as const;

/** How runs are ordered: arm by arm within each repeat, or all repeats of one arm first. */
const RunOrderDef = oneOf(['interleaved', 'blocked'], {
  default: EXPERIMENT_DEFAULTS.order,
  description: 'interleaved: arm by arm within each repeat; blocked: all repeats of one arm first.',
});

const className = say(Type.String({ minLength: 1 }), { type: 'must be a class name', empty: 'must be a class name' });

/** One variant of the plan. */
const ArmDef = closed({
  // Arm names are analysis keys and appear in run.json; anything printable, but not unbounded.
  name: say(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]+$' }), {
    pattern: 'must not contain control characters',
  }),
  classes: Type.Optional(
    say(Type.Array(className, { minItems: 1, description: "The plan's classes this arm runs (default: all); applied after overrides." }), {
      type: 'must be an array of class names',
      empty: 'must not be empty (an arm runs at least one class)',
    }),
  ),
  overrides: Type.Optional(
    Type.Unsafe<Record<string, unknown>>(
      Type.Object(
        {},
        { description: 'A JSON merge patch (RFC 7386) applied to the plan: objects merge, arrays and values replace, null deletes.' },
      ),
    ),
  ),
  expect_flow_control_engaged: Type.Optional(
    Type.Boolean({ description: "Whether the gateway's flow control should engage in this arm's runs (checked by slo_proof)." }),
  ),
});

/** Which per-run figure the analysis compares between two arms. */
const CompareDef = closed({
  metric: Type.String({ minLength: 1, description: 'A column of analysis.json runs[], e.g. realtime_surge_p95_ttft_ms.' }),
  baseline: Type.String({ minLength: 1, description: 'The name of an arm.' }),
  treatment: Type.String({ minLength: 1, description: 'The name of another arm.' }),
});

/** Thresholds the analysis reports against. */
const GatesDef = closed({
  repeat_spread_max: Type.Optional(
    Type.Number({
      minimum: 1,
      default: EXPERIMENT_DEFAULTS.repeat_spread_max,
      description: 'An arm is stable when max/min of the compared figure over its repeats is at most this.',
    }),
  ),
});

/** A whole experiment file. */
export const ExperimentFile = fileRoot(
  {
    schema: Type.Literal(EXPERIMENT_SCHEMA),
    name: nameField(128),
    business_question: Type.String({ minLength: 1, maxLength: 1000, description: 'The question the analysis answers, in plain words.' }),
    claim_boundary: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'What the result does and does not show; a generic sentence is written when absent.',
      }),
    ),
    plan: Type.String({ minLength: 1, description: 'The loadfleet.plan/v1 file, relative to the experiment file.' }),
    // Ten arms × a hundred repeats is already days of runs: a bigger number is almost certainly a typo.
    repeats: Type.Integer({ minimum: 1, maximum: 100, description: 'Runs of each arm.' }),
    order: Type.Optional(RunOrderDef),
    arms: Type.Array(ArmDef, {
      minItems: 1,
      description: 'Variants of the plan: a subset of its classes and/or overrides merged into it.',
    }),
    compare: CompareDef,
    gates: Type.Optional(GatesDef),
  },
  { title: EXPERIMENT_SCHEMA, description: 'Runs arms × repeats of one plan and writes one analysis comparing two arms.' },
);

/** How runs are ordered: arm by arm within each repeat, or all repeats of one arm first. */
export type RunOrder = Static<typeof RunOrderDef>;

/** One variant of the plan. */
export type Arm = Static<typeof ArmDef>;

/** Which per-run figure the analysis compares between two arms. */
export type Compare = Static<typeof CompareDef>;

/** Thresholds the analysis reports against (defaults filled in). */
export type Gates = Required<Static<typeof GatesDef>>;

/** A validated experiment with defaults filled in. */
export type Experiment = Omit<Static<typeof ExperimentFile>, '$schema' | 'order' | 'gates'> & { order: RunOrder; gates: Gates };

/** An experiment with its plan read and every arm's effective plan validated. */
export interface LoadedExperiment {
  experiment: Experiment;
  /** Absolute path of the plan file. */
  planPath: string;
  plan: Plan;
  /** The plan each arm runs, in the order of `experiment.arms`. */
  armPlans: Plan[];
}
