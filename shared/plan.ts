// Types of the `loadfleet.plan/v1` contract (../shared/spec/plan.md): the file's types come from its
// one definition (plan-schema.ts); validation lives in plan-validate.ts. Everything here is plain
// data that travels to agents unchanged.
import type { Static } from '@sinclair/typebox';
import type { ChatMessage } from './apis/contract.js';
import type * as D from './plan-schema.js';
import type { PromptVocabulary } from './prompt-vocabulary.js';

// The defaults live with the definition (its schema publishes them); every caller reads them here.
export { PLAN_DEFAULTS, PLAN_SCHEMA, PROMPT_DEFAULTS, TRACE_DEFAULTS, TRACES_DEFAULTS } from './plan-schema.js';

/** Which OpenAI-compatible endpoint a plan targets. */
export type ApiKind = Static<typeof D.ApiKind>;

/** Where requests go; absent from a plan means "the built-in engine-sim". `timeout_s` is filled by validation. */
export type Target = Omit<Static<typeof D.Target>, 'timeout_s'> & { timeout_s: number };

/** The studies' traffic shape (domain.md §8). */
export type NoisySinusoidalPattern = Static<typeof D.NoisySinusoidalPattern>;

/** A constant value, written as a pattern. */
export type ConstantPattern = Static<typeof D.ConstantPattern>;

/** A linear ramp from `from` to `to` over the phase. */
export type RampPattern = Static<typeof D.RampPattern>;

/** A rate (requests/s) or concurrency pattern over time. */
export type Pattern = Static<typeof D.Pattern>;

/** One active interval of a class; exactly one of the three load fields is set. */
export type Phase = Static<typeof D.Phase>;

/** Registered load models, one file each under shared/load/. */
export type LoadModelName = Static<typeof D.LoadModelName>;

/** How a class offers its load; every model has phases once validated (a trace's list is empty). */
export type Load = Omit<Static<typeof D.Load>, 'phases'> & { phases: Phase[] };

/** Shape of each request's prompt. */
export type PromptSpec = Static<typeof D.PromptSpec>;

/** Per-class service level objectives; attainment is reported against them. */
export type Slo = Static<typeof D.Slo>;

/** The time TTFT is measured from for an SLO. */
export type SloBasis = Static<typeof D.SloBasis>;

/** The TTFT metric an SLO with `basis` is judged on. */
export function sloTtftMetric(basis: SloBasis | undefined): 'ttft' | 'ttft_from_intended' {
  return basis === 'intended' ? 'ttft_from_intended' : 'ttft';
}

/** One traffic class (tenant). */
export type TrafficClass = Omit<Static<typeof D.TrafficClass>, 'load'> & { load: Load };

/** A named analysis window, seconds from the run start. */
export type Window = Static<typeof D.Window>;

/** A Prometheus endpoint the coordinator scrapes. */
export type ScrapeTarget = Static<typeof D.ScrapeTarget>;

/** The server's OpenTelemetry request spans, received and joined to the requests (opt-in). */
export type TracesSpec = Static<typeof D.TracesSpec>;

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
  /** Dataset classes: each record's tokens as the target counted it (head included), index = record. */
  record_tokens?: number[];
  /** Before load: a seeded sample of the class's real request bodies counted on the target. */
  check?: PromptLengthCheck;
  /** Why that sample could not be counted (the count failed): no check stands for the class then. */
  check_error?: string;
  /**
   * Why the class, with a way to count on the target, is not sized on it: its count failed (the
   * tokenize endpoint or tokenizer file errored, or no token-exact vocabulary was found).
   */
  count_error?: string;
}

/** run.json `prompt_length_check`: a sample of real bodies counted on the target before any load. */
export interface PromptLengthCheck {
  /** Requests whose bodies were counted (all of them when the class has few). */
  sampled: number;
  /** Of those, how many counted exactly their planned prompt tokens. */
  exact: number;
  /** exact / sampled. */
  exact_share: number;
  /** Largest |counted − planned| over the sample. */
  max_abs_difference: number;
  /** Sampled requests whose planned tokens differ from the length they asked for (too short for the fixed costs). */
  unreachable: number;
}

/** A whole load plan, as validated (defaults filled in). */
export type Plan = Omit<Static<typeof D.PlanFile>, '$schema' | 'target' | 'classes'> & {
  target?: Target;
  classes: TrafficClass[];
  /** Per class: filled in by the coordinator before the run (calibrate.ts); refused in a written plan. */
  prompt_calibration?: Record<string, PromptCalibration>;
  /** The target's token-exact vocabulary (prompt-vocabulary.ts): filled in by the coordinator, refused in a written plan. */
  prompt_vocabulary?: PromptVocabulary;
  /**
   * By API, where the plan's per-request classes send to APIs counted differently (with the chat
   * template and without: shared/api-kinds.ts chatTemplated): the vocabulary found on each API
   * whose counting differs from the first per-request class's (prompt_vocabulary is that one).
   * Filled in by the coordinator, refused in a written plan.
   */
  prompt_vocabularies?: Partial<Record<ApiKind, PromptVocabulary>>;
  /**
   * Never written in a plan file (validation refuses it): the trace and dataset files the plan
   * names, read and checked by the coordinator and sent to the agents with the plan.
   */
  inputs?: WorkloadInputs;
};

/** True when the class runs a closed loop (concurrency) rather than an arrival schedule. */
export function isClosedLoop(cls: TrafficClass): boolean {
  return cls.load.model === 'concurrency';
}

// ---- Real workloads: length distributions, datasets, trace replay.

/** A token count: fixed, or drawn per request. */
export type LengthSpec = Static<ReturnType<typeof D.lengthField>>;

/** Tokens per request drawn from a distribution; every draw is rounded and clamped to [min, max] (min ≥ 1). */
export type LengthDistribution = Exclude<LengthSpec, number>;

/** `load.trace`: a production trace replayed row by row (`file` made absolute when the plan is loaded). */
export type TraceSpec = Static<typeof D.TraceSpec>;

/** Trace file formats (domain.md §10). */
export type TraceFormat = TraceSpec['format'];

/** `prompt.dataset`: real prompts drawn per request (`file` made absolute when the plan is loaded). */
export type DatasetSpec = Static<typeof D.DatasetSpec>;

/** One chat message of a dataset record. */
export type { ChatMessage };

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
  /**
   * Datasets with length filters: every record, so the coordinator can filter on the target's own
   * counts (calibrate/); dropped from the plan before it is sent.
   */
  unfiltered_datasets?: Record<string, DatasetRecord[]>;
}

/** `load.session`: multi-turn conversations; each session arrives open loop and is pinned to one agent. */
export type SessionSpec = Static<typeof D.SessionSpec>;
