// Types of the `loadfleet.plan/v1` contract (../shared/spec/plan.md). Validation lives in
// plan-validate.ts; everything here is plain data that travels to agents unchanged.

/** The only plan schema this version reads. */
export const PLAN_SCHEMA = 'loadfleet.plan/v1';

/** Which OpenAI-compatible endpoint a plan targets. */
export type ApiKind = 'chat' | 'completions';

/** Where requests go; absent from a plan means "the built-in engine-sim". */
export interface Target {
  base_url: string;
  api: ApiKind;
  model: string;
  /** Name of the environment variable holding the API key on each agent (never the key). */
  api_key_env?: string;
  timeout_s: number;
  headers?: Record<string, string>;
  /**
   * When true, a stream without a usage event is `missing_usage` (a failure). By default it is ok:
   * TTFT and e2e need no usage, and output tokens are then counted by the agent (output_token_source).
   */
  require_usage?: boolean;
  /**
   * Path of the model's Hugging Face tokenizer.json (tokenizer_config.json beside it is read too):
   * the coordinator sizes prompts with it when the target has no tokenize endpoint, and agents that
   * find it at the same path count streamed text with it when the server sends no usage.
   */
  tokenizer?: string;
}

/** The studies' traffic shape (domain.md §8). */
export interface NoisySinusoidalPattern {
  pattern: 'noisy-sinusoidal';
  center: number;
  amplitude: number;
  period_s: number;
  /** σ of the Gaussian noise redrawn per 0.5 s bucket; default max(0.05, 0.05·center). */
  noise?: number;
  spike_probability?: number;
  /** Phase as a fraction of a period. */
  phase_offset?: number;
  /** Linear ramp-in from 0 over this many seconds. */
  ramp_s?: number;
}

/** A constant value, written as a pattern. */
export interface ConstantPattern {
  pattern: 'constant';
  value: number;
}

/** A linear ramp from `from` to `to` over the phase. */
export interface RampPattern {
  pattern: 'ramp';
  from: number;
  to: number;
}

/** A rate (requests/s) or concurrency pattern over time. */
export type Pattern = NoisySinusoidalPattern | ConstantPattern | RampPattern;

/** One active interval of a class; exactly one of the three load fields is set. */
export interface Phase {
  start_s: number;
  duration_s: number;
  rate_per_s?: number;
  rate?: Pattern;
  concurrency?: number | Pattern;
}

/** Registered load models, one file each under shared/load/. */
export type LoadModelName = 'constant-rate' | 'poisson' | 'concurrency' | 'trace' | 'sessions';

/** How a class offers its load. */
export interface Load {
  model: LoadModelName;
  /** Every model but `trace` (whose rows are its arrivals) has phases; validation enforces it. */
  phases: Phase[];
  /** `trace` only: the file whose rows are replayed (workload-files.ts, load/trace.ts). */
  trace?: TraceSpec;
  /** `sessions` only: the shape of each multi-turn conversation (phases give the session arrivals). */
  session?: SessionSpec;
}

/** Shape of each request's prompt. */
export interface PromptSpec {
  /** Required unless the class replays a trace (rows give it) or draws from a dataset (the text gives it). */
  input_tokens?: LengthSpec;
  /** Required unless the class replays a trace; with a dataset, the fallback for records without one. */
  output_tokens?: LengthSpec;
  /** Prompts drawn from a file of real prompts or conversations (workload-files.ts, request-shape.ts). */
  dataset?: DatasetSpec;
  ignore_eos?: boolean;
  /** `unique` defeats prefix caching; `shared` starts every prompt with the same prefix. */
  cache?: 'unique' | 'shared';
  shared_prefix_tokens?: number;
  canary?: boolean;
}

/** Per-class service level objectives; attainment is reported against them. */
export interface Slo {
  ttft_p95_ms?: number;
  tpot_p95_ms?: number;
  e2e_p95_ms?: number;
  success_rate_min?: number;
  /**
   * Which TTFT the SLO judges: from the actual send (`sent`, default) or from the intended send
   * (`intended`: ttft_from_intended, which keeps any delay the client added; open loop only).
   */
  basis?: SloBasis;
}

/** The time TTFT is measured from for an SLO. */
export type SloBasis = 'sent' | 'intended';

/** The TTFT metric an SLO with `basis` is judged on. */
export function sloTtftMetric(basis: SloBasis | undefined): 'ttft' | 'ttft_from_intended' {
  return basis === 'intended' ? 'ttft_from_intended' : 'ttft';
}

/** One traffic class (tenant). */
export interface TrafficClass {
  name: string;
  priority?: number;
  headers?: Record<string, string>;
  prompt: PromptSpec;
  load: Load;
  slo?: Slo;
}

/** A named analysis window, seconds from the run start. */
export interface Window {
  name: string;
  start_s: number;
  end_s: number;
}

/** A Prometheus endpoint the coordinator scrapes. */
export interface ScrapeTarget {
  name: string;
  url: string;
  interval_s: number;
}

/** How a class's prompt length was made to fit its input_tokens (run.json `prompt_length_method`). */
export type PromptLengthMethod = 'server-tokenize' | 'tokenizer-file' | 'words-unverified';

/**
 * A class's prompt, sized against the target before any load: how many filler words go before
 * (shared prefix) and after the unique head, and what the target's tokenizer counted for the
 * whole request. Written by the coordinator into the plan as run, never by hand.
 */
export interface PromptCalibration {
  method: PromptLengthMethod;
  prefix_words: number;
  words: number;
  /** Pad words (" the") after the filler that top the count up to the target exactly. */
  pad_words: number;
  /** The whole request (chat template included where the endpoint applies it) as counted; null when unverified. */
  counted_prompt_tokens: number | null;
  /** Tokenize calls the calibration made. */
  attempts: number;
  /** What was asked and why this method (e.g. the endpoint that answered, or why none did). */
  note: string;
}

/** A whole load plan. */
export interface Plan {
  schema: typeof PLAN_SCHEMA;
  name: string;
  seed: number;
  duration_s: number;
  drain_timeout_s?: number;
  /** Share of failed requests above which the run is `degraded` (default 0.01). */
  max_error_share?: number;
  target?: Target;
  classes: TrafficClass[];
  windows?: Window[];
  scrape?: ScrapeTarget[];
  /** Per class: filled in by the coordinator before the run (calibrate.ts); refused in a written plan. */
  prompt_calibration?: Record<string, PromptCalibration>;
  /**
   * Never written in a plan file (validation refuses it): the trace and dataset files the plan
   * names, read and checked by the coordinator and sent to the agents with the plan.
   */
  inputs?: WorkloadInputs;
}

/** Defaults applied where a plan is silent. */
export const PLAN_DEFAULTS = {
  drain_timeout_s: 30,
  max_error_share: 0.01,
  timeout_s: 90,
} as const;

/** True when the class runs a closed loop (concurrency) rather than an arrival schedule. */
export function isClosedLoop(cls: TrafficClass): boolean {
  return cls.load.model === 'concurrency';
}

// ---- Real workloads (issue 14): length distributions, datasets, trace replay.

/** Tokens per request drawn from a distribution; every draw is rounded and clamped to [min, max] (min ≥ 1). */
export type LengthDistribution =
  | { distribution: 'uniform'; min: number; max: number }
  | { distribution: 'normal'; mean: number; stddev: number; min?: number; max?: number }
  /** exp(N(mu, sigma²)): mu and sigma are those of the token count's natural logarithm. */
  | { distribution: 'lognormal'; mu: number; sigma: number; min?: number; max?: number }
  /** An empirical distribution: `[tokens, weight]` pairs, each drawn with probability weight / Σ weights. */
  | { distribution: 'histogram'; buckets: [number, number][] };

/** A token count: fixed, or drawn per request. */
export type LengthSpec = number | LengthDistribution;

/** Trace file formats (domain.md §10). */
export type TraceFormat = 'mooncake' | 'azure' | 'burstgpt';

/** `load.trace`: a production trace replayed row by row. */
export interface TraceSpec {
  /** Path relative to the plan file (made absolute when the plan is loaded). */
  file: string;
  format: TraceFormat;
  /** Trace time × time_scale = time from the run start (0.5 replays twice as fast); default 1. */
  time_scale?: number;
  /** Replay from this trace second on (rows before it are skipped; it becomes the run's t = 0); default 0. */
  start_s?: number;
  /** At most this many rows. */
  limit?: number;
  /** Tokens per Mooncake hash id (the last block of a row may be partial); default 512. */
  block_tokens?: number;
}

/** `prompt.dataset`: real prompts drawn per request. */
export interface DatasetSpec {
  /** Path relative to the plan file (made absolute when the plan is loaded). */
  file: string;
  /** `jsonl`: `{prompt | messages, output_tokens?}` per line; `sharegpt`: a JSON array of `{conversations: [{from, value}]}`. */
  format: 'jsonl' | 'sharegpt';
  /** Draw with replacement (default) or walk a seeded permutation (each record once per pass). */
  replacement?: boolean;
  /** Keep only records whose prompt has at least / at most this many words. */
  min_input_tokens?: number;
  max_input_tokens?: number;
}

/** One chat message of a dataset record. */
export interface ChatMessage {
  role: string;
  content: string;
}

/** One replayable trace row. */
export interface TraceRow {
  /** Intended time, integer ns from the run start (trace time × time_scale, from start_s). */
  at_ns: number;
  input_tokens: number;
  output_tokens: number;
  /** Mooncake hash ids (empty for formats without them). */
  hash_ids: number[];
  /** 1-based line of the row in its file. */
  line: number;
}

/** One dataset record after filtering. */
export interface DatasetRecord {
  /** A plain prompt, or a conversation ending with a user message. */
  prompt?: string;
  messages?: ChatMessage[];
  output_tokens?: number;
  /** 1-based line (JSONL) or array index + 1 (ShareGPT) in its file. */
  line: number;
}

/** A file read for the run: what it was and which SHA-256 it had. */
export interface WorkloadFile {
  class: string;
  kind: 'trace' | 'dataset';
  path: string;
  sha256: string;
  /** Rows (trace) or records (dataset) in the file, and how many were kept by the slice or filters. */
  rows_in_file: number;
  rows_used: number;
}

/** Everything the plan's files contribute, per class. */
export interface WorkloadInputs {
  files: WorkloadFile[];
  traces: Record<string, TraceRow[]>;
  datasets: Record<string, DatasetRecord[]>;
}

/** `load.session`: multi-turn conversations; each session arrives open loop and is pinned to one agent. */
export interface SessionSpec {
  /** User turns per session. */
  turns: LengthSpec;
  /** Seconds from a reply's end to the next user message: fixed, or uniform in [min, max]. */
  think_time_s: number | { distribution: 'uniform'; min: number; max: number };
  /** Tokens (words) of each new user message. */
  user_tokens: LengthSpec;
}
