// The `loadfleet.sweep/v1` file format, defined once: a saturation search over one class of a plan.
// The types, the published JSON Schema and the shape check come from this definition; the rules
// across fields (and against the plan) are sweep-validate.ts.
import { type Static, Type } from '@sinclair/typebox';
import { nameField, Slo } from './plan-schema.js';
import { closed, fileRoot, oneOf } from './schema-problems.js';

/** The only sweep schema this version reads. */
export const SWEEP_SCHEMA = 'loadfleet.sweep/v1';

/** Defaults applied where a sweep is silent. */
export const SWEEP_DEFAULTS = {
  max_failing_stages: 2,
  max_error_share: 0.1,
} as const;

const value = (description?: string) => Type.Number({ exclusiveMinimum: 0, ...(description && { description }) });

/**
 * What is scaled: an open-loop class's arrival rate (req/s), a closed-loop class's concurrency, or a
 * replayed trace's speed (× as recorded: the stage replays it with time_scale = the plan's / value).
 */
const SweepScaleDef = oneOf(['rate', 'concurrency', 'speed'], {
  description: 'rate (req/s) for an open-loop class, concurrency for a closed loop, speed (× as recorded) for a replayed trace.',
});

/** Run the listed values, in order. */
const StagesDef = closed({
  type: Type.Literal('stages'),
  values: Type.Array(value(), { minItems: 1, description: 'Strictly rising.' }),
});

/** Run start, start·factor, start·factor², … up to max. */
const GeometricDef = closed({
  type: Type.Literal('geometric'),
  start: value(),
  factor: Type.Number({ exclusiveMinimum: 1, maximum: 100 }),
  max: value('At least start.'),
});

/** Run `pass` and `fail`, then halve the bracket between them until it is at most `resolution` wide. */
const BisectDef = closed({
  type: Type.Literal('bisect'),
  pass: value('A value that meets the SLO.'),
  fail: value('A value above pass that misses it.'),
  resolution: value('Below fail − pass; the search stops when the bracket is at most this wide.'),
});

/** The SLO a stage of the scaled class must meet (overrides the class's plan `slo` when given). */
const SweepSloDef = closed(
  {
    ttft_p95_ms: Slo.properties.ttft_p95_ms,
    tpot_p95_ms: Slo.properties.tpot_p95_ms,
    success_rate_min: Slo.properties.success_rate_min,
    basis: Slo.properties.basis,
  },
  { description: "Overrides the scaled class's plan slo." },
);

/** When the sweep stops starting stages, to protect an expensive endpoint. */
const StopRulesDef = closed({
  max_failing_stages: Type.Optional(
    Type.Integer({
      minimum: 1,
      default: SWEEP_DEFAULTS.max_failing_stages,
      description: 'Escalating strategies (stages, geometric) start no stage after this many failing ones.',
    }),
  ),
  max_error_share: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1,
      default: SWEEP_DEFAULTS.max_error_share,
      description: 'A stage whose scaled class fails more than this share of its measured requests ends the sweep.',
    }),
  ),
  max_value: Type.Optional(value('No stage is run above this value.')),
  time_budget_s: Type.Optional(value("No stage is started unless it can finish within this many seconds of the sweep's start.")),
});

/** A whole sweep file. */
export const SweepFile = fileRoot(
  {
    schema: Type.Literal(SWEEP_SCHEMA),
    name: nameField(100),
    plan: Type.String({ minLength: 1, description: "The loadfleet.plan/v1 file, relative to the sweep file's directory." }),
    class: nameField(64, 'The class scaled; every other class keeps its plan.'),
    scale: SweepScaleDef,
    // One day, as for plans: a longer stage is almost certainly a unit mistake.
    stage_duration_s: Type.Number({ exclusiveMinimum: 0, maximum: 86_400, description: 'Length of each stage (each stage is one run).' }),
    warmup_s: Type.Number({ minimum: 0, description: "Seconds after the scaled phase starts that are excluded from the stage's figures." }),
    stop: Type.Optional(StopRulesDef),
    strategy: Type.Union([StagesDef, GeometricDef, BisectDef], { description: 'How the values of the stages are chosen.' }),
    slo: Type.Optional(SweepSloDef),
  },
  {
    title: SWEEP_SCHEMA,
    description:
      'A saturation search: scale one class of a plan stage by stage and find the highest value at which it meets its SLO. The validator (shared/sweep-validate.ts) also checks what a schema cannot: values rising, warm-up inside the stage, the class and its one phase in the plan.',
  },
);

/** What is scaled. */
export type SweepScale = Static<typeof SweepScaleDef>;

/** Run the listed values, in order. */
export type StagesStrategy = Static<typeof StagesDef>;

/** Run start, start·factor, start·factor², … up to max. */
export type GeometricStrategy = Static<typeof GeometricDef>;

/** Run `pass` and `fail`, then halve the bracket between them until it is at most `resolution` wide. */
export type BisectStrategy = Static<typeof BisectDef>;

/** How the values of the stages are chosen. */
export type SweepStrategy = StagesStrategy | GeometricStrategy | BisectStrategy;

/** The SLO a stage of the scaled class must meet (overrides the class's plan `slo` when given). */
export type SweepSlo = Static<typeof SweepSloDef>;

/** When the sweep stops starting stages, to protect an expensive endpoint. */
export type StopRules = Static<typeof StopRulesDef>;

/** A whole sweep file. */
export type Sweep = Omit<Static<typeof SweepFile>, '$schema'>;

/** Achieved below this share of offered throughput means the stage saturated. */
export const SATURATION_RATIO = 0.9;
