// The other results files a finished run or study leaves, defined once like run.json
// (run-schema.ts): sweep.json (`loadfleet.sweep-result/v1`), an experiment's analysis.json
// (`loadfleet.analysis/v1`) and compare's comparison.json (`loadfleet.comparison/v1`). Their
// writers are typed against these, their readers check a file with artifact-read.ts, and the JSON
// Schemas are published beside the plan's. Objects stay open: a field is added, never renamed.
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { oneOf } from './schema-problems.js';
import type { SweepSlo } from './sweep.js';

const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const count = () => Type.Integer({ minimum: 0 });
const Definitions = Type.Record(Type.String(), Type.String(), { description: 'one sentence per figure' });
/** A section whose fields its own module defines: an object, read where it is used. */
const Section = (description: string) => Type.Unsafe<object>(Type.Record(Type.String(), Type.Unknown(), { description }));

export const SWEEP_RESULT_SCHEMA = 'loadfleet.sweep-result/v1';
export const ANALYSIS_SCHEMA = 'loadfleet.analysis/v1';
export const COMPARISON_SCHEMA = 'loadfleet.comparison/v1';

/** One stage of a sweep: its value, its figures over the measured window and its verdict. */
export const SweepStage = Type.Object({
  index: count(),
  value: Type.Number(),
  measurement: Type.Integer({ minimum: 1 }),
  verdict: oneOf(['pass', 'fail', 'client_limited', 'error']),
  reasons: Type.Array(Type.String()),
  reason: Type.String(),
  measure_window: Type.Object({ start_s: Type.Number(), end_s: Type.Number() }),
  run_dir: nullable(Type.String()),
  requests: count(),
  completed: count(),
  failed: count(),
  success_rate: nullable(Type.Number()),
  achieved_rps: nullable(Type.Number()),
  ttft_p95_ms: nullable(Type.Number()),
  tpot_p95_ms: nullable(Type.Number()),
  client_limited: Type.Boolean(),
  run_status: Type.String(),
  cost: Type.Optional(nullable(Section("the stage's budget figures"))),
});

/** sweep.json. */
export const SweepResultFile = Type.Object(
  {
    schema: Type.Literal(SWEEP_RESULT_SCHEMA),
    sweep_id: Type.String({ minLength: 1 }),
    name: Type.String(),
    status: oneOf(['running', 'interrupted', 'aborted', 'completed']),
    stop_rule: nullable(Type.String()),
    stop_reason: nullable(Type.String()),
    started_at: Type.String(),
    finished_at: nullable(Type.String()),
    sweep_file: Type.String(),
    plan_file: Type.String(),
    sweep: Section('the sweep as run (loadfleet.sweep.v1.schema.json)'),
    class: Type.String(),
    scale: oneOf(['rate', 'concurrency', 'speed']),
    unit: Type.String(),
    background_classes: Type.Array(Type.String()),
    slo: Type.Unsafe<SweepSlo>(Section("the SLO every stage is judged against (the sweep's, else the class's)")),
    agents: count(),
    // Optional: a sweep.json written before a restart could take a sweep up has neither.
    coordinator: Type.Optional(Type.Object({ host: Type.String(), pid: Type.Integer() })),
    resumed: Type.Optional(
      Type.Array(
        Type.Object({
          stage_index: count(),
          run_dir: Type.String(),
          how: oneOf(['recovered', 'found_complete', 'rerun']),
          down_from: nullable(Type.String()),
          restarted_at: Type.String(),
          outage_s: nullable(Type.Number()),
        }),
      ),
    ),
    design: Type.String(),
    client_limited_remeasures: count(),
    stages: Type.Array(SweepStage),
    capacity: nullable(Type.Number()),
    bracket: Type.Tuple([nullable(Type.Number()), nullable(Type.Number())]),
    ignored_passes: Type.Array(Type.Number()),
    knee: Section('the value where achieved throughput stops following the offered load'),
    client_advice: nullable(Section('how many agents the first client-limited stage needed')),
    pareto: Type.Optional(Section('the cost/throughput front over the stages')),
    answer: Type.String(),
    definitions: Definitions,
  },
  { title: 'loadfleet sweep.json', description: "a sweep's stages, verdicts and capacity (loadfleet.sweep-result/v1)" },
);

/** A figure across an arm's repeats. */
const Spread3 = Type.Object({ median: nullable(Type.Number()), min: nullable(Type.Number()), max: nullable(Type.Number()) });

/** analysis.json. */
export const AnalysisFile = Type.Object(
  {
    schema: Type.Literal(ANALYSIS_SCHEMA),
    experiment: Type.String(),
    business_question: Type.String(),
    answer: Type.String(),
    claim_boundary: Type.String(),
    run_count: count(),
    all_data_quality_valid: Type.Boolean(),
    all_slo_proof_valid: Type.Boolean(),
    by_arm: Type.Record(
      Type.String(),
      Type.Record(Type.String(), Type.Union([Type.Number(), Type.Boolean(), Spread3, Section('repeat_spread')]), {
        description: 'runs, validity, and each figure as {median, min, max} over the repeats',
      }),
    ),
    comparison: Type.Record(Type.String(), Type.Union([Type.Number(), Type.String(), Type.Null()])),
    pareto: Type.Optional(Section('the cost/throughput front over the arms')),
    gates: Type.Optional(Section('stability per arm, and which checks kept which run invalid')),
    runs: Type.Array(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])), {
      description: 'one flat row per run, with its run directory',
    }),
    definitions: Definitions,
  },
  { title: 'loadfleet analysis.json', description: "an experiment's analysis (loadfleet.analysis/v1)" },
);

/** One figure of one class and window, baseline against candidate. */
export const FigureChangeSchema = Type.Object({
  figure: Type.String(),
  unit: oneOf(['ms', 'share', 'req/s']),
  better: Type.String(),
  gating: Type.Boolean(),
  baseline: nullable(Type.Number()),
  candidate: nullable(Type.Number()),
  failures_decide: Type.Array(oneOf(['baseline', 'candidate'])),
  delta: nullable(Type.Number()),
  delta_relative: nullable(Type.Number()),
  interval: nullable(Type.Object({ low: nullable(Type.Number()), high: nullable(Type.Number()) })),
  p_worse: nullable(Type.Number()),
  verdict: Type.String(),
  reason: nullable(Type.String()),
});

const ComparedSide = Type.Object({ label: Type.String(), runs: Type.Array(Type.String()), dirs: Type.Array(Type.String()) });

/** comparison.json. */
export const ComparisonFile = Type.Object(
  {
    // Checked as the constant; typed as a string, as compare's writer builds it.
    schema: Type.Unsafe<string>(Type.Literal(COMPARISON_SCHEMA)),
    baseline: Type.Object({
      ...ComparedSide.properties,
      source: Type.Optional(nullable(Section('the other tool the baseline came from'))),
    }),
    candidate: ComparedSide,
    comparable: Type.Object({ same_plan_and_schedule: nullable(Type.Boolean()), problems: Type.Array(Type.String()) }),
    method: Type.String(),
    confidence: Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }),
    false_alarm: Type.Number(),
    resamples: count(),
    seed: Type.String(),
    thresholds: Type.Object({ relative: Type.Number(), success_rate_points: Type.Number() }),
    gating: Type.Array(Type.String()),
    limits: Type.Array(Type.String()),
    regressed: Type.Array(Type.String()),
    improved: Type.Array(Type.String()),
    reported: Type.Object({ regressed: Type.Array(Type.String()), improved: Type.Array(Type.String()) }),
    classes: Type.Record(Type.String(), Type.Record(Type.String(), Type.Array(FigureChangeSchema))),
    definitions: Definitions,
  },
  { title: 'loadfleet comparison.json', description: 'two runs or experiments compared (loadfleet.comparison/v1)' },
);

export type SweepResultJson = Static<typeof SweepResultFile>;
export type AnalysisJson = Static<typeof AnalysisFile>;
export type ComparisonJson = Static<typeof ComparisonFile>;
