// The `loadfleet.run/v1` file format (run.json), defined once: the writer (coordinator/artifacts/)
// is typed against it, every reader takes its type from it (artifact-read.ts checks a file against
// it), and its JSON Schema is published under examples/schemas/ (file-schemas.ts). Objects stay
// open: a section may grow a field without breaking an older reader; the fields named here are the
// ones the readers rely on, and a field is extended, never renamed. The spec is ../spec/artifacts.md.
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { exactInteger } from './exact-integer.js';
import type { Plan } from './plan.js';
import { oneOf } from './schema-problems.js';

/** The plan as run.json holds it: the parsed trace and dataset rows stay out (workload_files names the files). */
export type RunPlan = Omit<Plan, 'inputs'>;

/** The only run schema this version reads and writes. */
export const RUN_SCHEMA = 'loadfleet.run/v1';

const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const count = (description?: string) => Type.Integer({ minimum: 0, ...(description && { description }) });
const ms = nullable(Type.Number());
/** Name → count. */
const Counts = Type.Record(Type.String(), Type.Number());
/** A section whose fields its own module defines (server figures, cost, headroom…): an object, read where it is used. */
const Section = (description: string) => Type.Unsafe<object>(Type.Record(Type.String(), Type.Unknown(), { description }));

/** A figure of a class in a window: `<metric>_<stat>_ms` and the counts beside them (see ../spec/artifacts.md). */
export const WindowFigure = Type.Union([Type.Number(), Type.Null(), Type.Boolean(), Counts]);
/** The `{metrics}` of one class in one window. */
export const WindowFigures = Type.Record(Type.String(), WindowFigure, {
  description: '<metric>_<stat>_ms for each latency metric and stat, requests, completed, failed, http_200, http_429, throughput…',
});

/** One declared SLO bound against the figure that answers it. */
export const SloCriterionSchema = Type.Object({
  criterion: Type.String({ description: "the plan's slo key (ttft_p95_ms, tpot_p95_ms, e2e_p95_ms, success_rate_min, …)" }),
  figure: nullable(Type.Number()),
  bound: Type.Number(),
  comparison: oneOf(['<=', '>=']),
  met: nullable(Type.Boolean()),
  on_failure: Type.Optional(Type.Boolean()),
  ranked: Type.Optional(count()),
  failed: Type.Optional(count()),
  unmeasured: Type.Optional(count()),
  reason: nullable(Type.String()),
});

const Verdict = oneOf(['met', 'missed', 'not_evaluable']);

/** `classes.<c>.slo_verdict`: whether the class met its declared SLO, per window. */
export const ClassVerdictSchema = Type.Object({
  verdict: Verdict,
  missed_in: Type.Array(Type.String()),
  not_evaluable_in: Type.Array(Type.String()),
  windows: Type.Record(
    Type.String(),
    Type.Object({ verdict: Verdict, requests: count(), criteria: Type.Array(SloCriterionSchema), reason: nullable(Type.String()) }),
  ),
});

/** `classes.<c>`. */
export const RunClass = Type.Object({
  requests: count(),
  completed: count(),
  failed: count(),
  http_200: count(),
  http_429: count(),
  status_counts: Type.Optional(Counts),
  outcome_counts: Type.Optional(Counts),
  closed_loop: Type.Boolean(),
  slo_verdict: Type.Optional(ClassVerdictSchema),
  windows: Type.Record(Type.String(), WindowFigures, { description: 'all, and every window of the plan' }),
  prompt_length_method: Type.Optional(Type.String()),
  calibrated_prompt_tokens: Type.Optional(nullable(Type.Number())),
  prompt_length_check: Type.Optional(Type.Unknown()),
  prompt_length_check_error: Type.Optional(nullable(Type.String())),
  prompt_exactness: Type.Optional(Type.Unknown()),
  prompt_tokens_differ: Type.Optional(Type.Object({ requests: count(), max_abs_difference: nullable(Type.Number()) })),
  output_token_sources: Type.Optional(Counts),
  ttft_uncertainty_p99_ms: Type.Optional(ms),
  request_canary_samples: Type.Optional(count()),
  request_canary_passed: Type.Optional(count()),
  adapters: Type.Optional(Type.Unknown({ description: 'LoRA adapters: requests and figures per adapter' })),
  tool_calls: Type.Optional(Type.Unknown({ description: 'tool calls: counts and the time to the first call' })),
});

/** One named check of a validity gate, with the evidence that decided it. */
export const GateCheck = Type.Object({
  name: Type.String(),
  status: oneOf(['pass', 'fail', 'not_evaluated', 'not_applicable']),
  evidence: Type.Record(Type.String(), Type.Unknown()),
  reason: nullable(Type.String()),
});

/** `data_quality` and `slo_proof`: valid only when at least one check applied and every applied check passed. */
export const GateSchema = Type.Object({
  valid: Type.Boolean(),
  applied: Type.Array(Type.String()),
  applies_because: Type.Record(Type.String(), Type.String()),
  not_applicable: Type.Array(Type.Object({ name: Type.String(), reason: Type.String() })),
  checks: Type.Array(GateCheck),
  definitions: Type.Record(Type.String(), Type.String()),
});

/** `agents[]` of a finished run. */
export const RunAgent = Type.Object({
  agent_id: Type.String(),
  host: Type.String(),
  clock_domain_id: Type.String(),
  offset_ns: Type.Number(),
  offset_uncertainty_ns: Type.Number(),
  rtt_ns: Type.Number(),
  share: Type.String({ description: 'the fraction of the global schedule the agent owned, e.g. "1/8"' }),
  requests: count(),
  completed: count(),
  failed: count(),
  schedule_lag_p99_ms: ms,
  event_loop_delay_p99_ms: ms,
  status: oneOf(['ok', 'lost']),
  remote: Type.Optional(Type.String()),
  clock_domain_declared: Type.Optional(Type.Boolean()),
  clock_anchor_uncertainty_ns: Type.Optional(nullable(Type.Number())),
  workers: Type.Optional(Type.Integer({ minimum: 1 })),
  process_agents: Type.Optional(Type.Integer({ minimum: 1 })),
  segment: Type.Optional(Type.Unknown({ description: 'the (from, to] of [0, 1] the agent owned' })),
  first_send_error_ns: Type.Optional(nullable(Type.Number())),
  prep_ms: Type.Optional(Type.Number()),
  cpu_ms: Type.Optional(nullable(Type.Number())),
  event_loop_utilization: Type.Optional(nullable(Type.Number())),
  ttft_uncertainty_p99_ms: Type.Optional(ms),
  outages: Type.Optional(Type.Array(Type.Unknown())),
  recovered_from_spool: Type.Optional(count()),
  self_test: Type.Optional(Type.Unknown({ description: "the agent's own costs, measured on loopback (null: not measured)" })),
});

/** `clock`. */
export const RunClock = Type.Object({
  clock_domain_id: Type.String(),
  alignment: oneOf(['explicit-common-clock-domain', 'measured-offsets']),
  max_abs_offset_ns: Type.Number(),
  max_offset_uncertainty_ns: Type.Number(),
  start_skew_ns: nullable(Type.Number()),
  offset_model: Type.Optional(Type.String()),
  coordinator_anchor_uncertainty_ns: Type.Optional(Type.Number()),
  definitions: Type.Optional(Type.Record(Type.String(), Type.String())),
});

/** `metric_population`. */
export const MetricPopulation = Type.Object({
  attempted_requests: count(),
  successful_requests: count(),
  performance_eligible_requests: count(),
  excluded_requests: count(),
  failure_policy: Type.String(),
  p99_interpretation: Type.String(),
  excluded_by_status: Type.Optional(Counts),
  not_applicable: Type.Optional(Type.Record(Type.String(), Type.Object({ metrics: Type.Array(Type.String()), why: Type.String() }))),
  p99_minimum_recommended_samples: Type.Optional(count()),
  output_token_sources: Type.Optional(Counts),
});

/** `histograms`. */
export const HistogramsSection = Type.Object({
  lowest_ns: Type.Number(),
  highest_ns: Type.Number(),
  significant_digits: Type.Integer(),
  merge: Type.Literal('hdr-add'),
  max_relative_error_vs_exact: nullable(Type.Number()),
  compared_values: Type.Optional(count()),
  exact_values: Type.Optional(count()),
  exact_method: Type.Optional(Type.String()),
  exact_passes: Type.Optional(count()),
  definition: Type.Optional(Type.String()),
});

/** `client_health`. */
export const ClientHealthSection = Type.Object({
  client_limited: Type.Boolean(),
  reasons: Type.Array(Type.String()),
  schedule_lag_p99_ms: ms,
  event_loop_delay_p99_ms: ms,
});

/** `records`: which request records reached the coordinator. */
export const RecordsSection = Type.Object({
  sent: oneOf(['all', 'sampled']),
  sample_every: nullable(Type.Integer({ minimum: 1 })),
  received: count(),
  figures_over_sample: Type.Optional(Type.Array(Type.String())),
  not_evaluable: Type.Optional(Type.Array(Type.String())),
});

const schemaId = Type.Literal(RUN_SCHEMA);
const isoTime = (description: string) => Type.String({ minLength: 1, description });
// The plan as run was validated before the run (loadfleet.plan.v1.schema.json); its type is the plan's.
const plan = Type.Unsafe<RunPlan>(
  Type.Object(
    { schema: Type.String(), classes: Type.Array(Type.Object({ name: Type.String() })) },
    { description: 'the plan as run (loadfleet.plan.v1.schema.json; target resolved, prompt_calibration and prompt_vocabulary added)' },
  ),
);
const experiment = Type.Optional(Type.Object({ name: Type.String(), arm: Type.String(), repeat: Type.Integer({ minimum: 1 }) }));

/** run.json of a run that sent load: completed, degraded or aborted. */
export const RunResultFile = Type.Object(
  {
    schema: schemaId,
    run_id: Type.String({ minLength: 1 }),
    experiment,
    status: oneOf(['completed', 'degraded', 'aborted']),
    status_reason: nullable(Type.String()),
    plan,
    plan_sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    schedule_sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    offered_schedule_sha256: Type.Optional(nullable(Type.String())),
    offered_schedule_matches: Type.Optional(nullable(Type.Boolean())),
    records: Type.Optional(RecordsSection),
    started_at: isoTime('ISO 8601, ms'),
    finished_at: isoTime('ISO 8601, ms'),
    started_at_unix_ns: exactInteger('integer ns since the Unix epoch in the run clock domain, an exact JSON integer'),
    finished_at_unix_ns: exactInteger('integer ns since the Unix epoch in the run clock domain, an exact JSON integer'),
    // Negative for a run aborted before its start instant (finished_at is then before started_at).
    wall_clock_ms: Type.Number({
      description: 'finished_at − started_at in ms; negative when the run was aborted before its start instant',
    }),
    clock: RunClock,
    agents: Type.Array(RunAgent),
    requests: count('requests dispatched, every status'),
    completed: count(),
    failed: count(),
    status_counts: Counts,
    error_counts: Counts,
    classes: Type.Record(Type.String(), RunClass),
    metric_population: MetricPopulation,
    histograms: HistogramsSection,
    client_health: ClientHealthSection,
    workload_files: Type.Optional(Type.Array(Section('a trace or dataset file the plan names: class, kind, path, sha256, rows'))),
    cache_reset: Type.Optional(Section('what was done to the server cache before the load')),
    server_spans: Type.Optional(Section("the server's spans joined to the requests (plan.traces)")),
    sessions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    request_canary_samples: Type.Optional(count()),
    request_canary_passed: Type.Optional(count()),
    duplicates_dropped: Type.Optional(count()),
    intervals: Type.Optional(
      Type.Object({
        length_s: Type.Number(),
        written: count(),
        late: count(),
        duplicates: count(),
        contributors: Type.Array(Type.Object({ second: Type.Integer(), agents: Type.Array(Type.Integer()) })),
      }),
    ),
    headroom: Type.Optional(nullable(Section('the headroom check made before any request'))),
    local_layout: Type.Optional(nullable(Section('how the coordinator laid its local agents out in processes'))),
    recovered: Type.Optional(Section('set when a restarted coordinator recovered the run from its journal')),
    shared_processes: Type.Optional(
      Type.Array(Type.Object({ host: Type.String(), pid: Type.Integer(), agents: Type.Array(Type.String()) })),
    ),
    server: Type.Optional(Section('what the coordinator scraped from the serving stack (server.definitions says what each figure is)')),
    cost: Type.Optional(Section('the cost figures per window and class (field_definitions says what each is)')),
    data_quality: Type.Optional(GateSchema),
    slo_proof: Type.Optional(GateSchema),
    timing_methodology: Type.Record(Type.String(), Type.String()),
    field_definitions: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { description: 'run.json of a run that sent load (loadfleet.run/v1)' },
);

/** run.json of a run that failed before any load. */
export const FailedRunFile = Type.Object(
  {
    schema: schemaId,
    run_id: Type.String({ minLength: 1 }),
    status: Type.Literal('failed'),
    status_reason: Type.String(),
    error: Type.Object({ code: Type.String({ pattern: '^LF_' }), message: Type.String() }),
    started_at: isoTime('when the coordinator began the run'),
    failed_at: isoTime('when the coordinator gave the run up'),
    plan,
    agents: Type.Array(
      Type.Object({ agent_id: Type.String(), host: Type.String(), state: Type.String(), detail: nullable(Type.String()) }),
    ),
    requests: Type.Literal(0),
    field_definitions: Type.Record(Type.String(), Type.String()),
  },
  { description: 'run.json of a run that failed before any load (status "failed")' },
);

/** run.json, either kind; its status tells which. */
export const RunFile = Type.Union([RunResultFile, FailedRunFile], {
  title: 'loadfleet run.json',
  description: 'run.json (loadfleet.run/v1)',
});

/** run.json of a run that sent load. */
export type RunJson = Static<typeof RunResultFile>;
/** run.json of a run that failed before any load. */
export type FailedRunJson = Static<typeof FailedRunFile>;
/** `classes.<c>` of run.json. */
export type RunJsonClass = Static<typeof RunClass>;
/** `{metrics}` of one class in one window. */
export type RunJsonWindow = Static<typeof WindowFigures>;
/** `metric_population`. */
export type RunJsonPopulation = Static<typeof MetricPopulation>;
/** `histograms`. */
export type RunJsonHistograms = Static<typeof HistogramsSection>;
/** `records`. */
export type RunJsonRecords = Static<typeof RecordsSection>;
/** A validity gate as run.json holds it. */
export type RunJsonGate = Static<typeof GateSchema>;
