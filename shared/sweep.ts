// Types of the `loadfleet.sweep/v1` file: a saturation search over one class of a plan. Validation
// lives in sweep-validate.ts; everything here is plain data.

import type { SloBasis } from './plan.js';

/** The only sweep schema this version reads. */
export const SWEEP_SCHEMA = 'loadfleet.sweep/v1';

/**
 * What is scaled: an open-loop class's arrival rate (req/s), a closed-loop class's concurrency, or a
 * replayed trace's speed (× as recorded: the stage replays it with time_scale = the plan's / value).
 */
export type SweepScale = 'rate' | 'concurrency' | 'speed';

/** Run the listed values, in order. */
export interface StagesStrategy {
  type: 'stages';
  values: number[];
}

/** Run start, start·factor, start·factor², … up to max. */
export interface GeometricStrategy {
  type: 'geometric';
  start: number;
  factor: number;
  max: number;
}

/** Run `pass` and `fail`, then halve the bracket between them until it is at most `resolution` wide. */
export interface BisectStrategy {
  type: 'bisect';
  pass: number;
  fail: number;
  resolution: number;
}

/** How the values of the stages are chosen. */
export type SweepStrategy = StagesStrategy | GeometricStrategy | BisectStrategy;

/** The SLO a stage of the scaled class must meet (overrides the class's plan `slo` when given). */
export interface SweepSlo {
  ttft_p95_ms?: number;
  tpot_p95_ms?: number;
  success_rate_min?: number;
  /** TTFT from the actual send (`sent`, default) or from the intended send (`intended`). */
  basis?: SloBasis;
}

/** When the sweep stops starting stages, to protect an expensive endpoint. */
export interface StopRules {
  /** Escalating strategies (stages, geometric) start no stage after this many failing ones. */
  max_failing_stages?: number;
  /** A stage whose scaled class fails more than this share of its measured requests ends the sweep. */
  max_error_share?: number;
  /** No stage is run above this value. */
  max_value?: number;
  /** No stage is started unless it can finish within this many seconds of the sweep's start. */
  time_budget_s?: number;
}

/** A whole sweep file. */
export interface Sweep {
  schema: typeof SWEEP_SCHEMA;
  name: string;
  /** The plan file, relative to the sweep file's directory. */
  plan: string;
  /** The class whose load is scaled; every other class keeps its plan. */
  class: string;
  scale: SweepScale;
  strategy: SweepStrategy;
  /** Length of each stage (each stage is one run of this length). */
  stage_duration_s: number;
  /** Seconds after the scaled phase starts that are excluded from the stage's figures. */
  warmup_s: number;
  stop?: StopRules;
  slo?: SweepSlo;
}

/** Defaults applied where a sweep is silent. */
export const SWEEP_DEFAULTS = {
  max_failing_stages: 2,
  max_error_share: 0.1,
} as const;

/** Achieved below this share of offered throughput means the stage saturated (issue 9). */
export const SATURATION_RATIO = 0.9;
