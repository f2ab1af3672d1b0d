// Types of the `loadfleet.experiment/v1` contract (../shared/spec/plan.md, "Experiment"): one plan,
// arms that vary it, repeats of each, and the comparison the analysis answers. Validation lives in
// experiment-validate.ts, the file loading in experiment-load.ts.
import type { Plan } from './plan.js';

/** The only experiment schema this version reads. */
export const EXPERIMENT_SCHEMA = 'loadfleet.experiment/v1';

/** How runs are ordered: arm by arm within each repeat, or all repeats of one arm first. */
export type RunOrder = 'interleaved' | 'blocked';

/** One variant of the plan. */
export interface Arm {
  name: string;
  /** The plan's classes this arm runs (default: all). Applied after `overrides`. */
  classes?: string[];
  /** A JSON merge patch (RFC 7386) applied to the plan: objects merge, arrays and values replace, null deletes. */
  overrides?: Record<string, unknown>;
  /** Whether the gateway's flow control should engage in this arm's runs (checked by slo_proof). */
  expect_flow_control_engaged?: boolean;
}

/** Which per-run figure the analysis compares between two arms. */
export interface Compare {
  /** A column of analysis.json `runs[]`, e.g. `realtime_surge_p95_ttft_ms`. */
  metric: string;
  baseline: string;
  treatment: string;
}

/** Thresholds the analysis reports against. */
export interface Gates {
  /** An arm is stable when max/min of the compared figure over its repeats is at most this. */
  repeat_spread_max: number;
}

/** A validated experiment with defaults filled in. */
export interface Experiment {
  schema: typeof EXPERIMENT_SCHEMA;
  name: string;
  business_question: string;
  /** Path of the plan, relative to the experiment file. */
  plan: string;
  repeats: number;
  order: RunOrder;
  arms: Arm[];
  compare: Compare;
  gates: Gates;
  /** What the result does and does not show; a generic sentence is written when absent. */
  claim_boundary?: string;
}

/** Defaults for the optional fields. */
export const EXPERIMENT_DEFAULTS = { order: 'interleaved', repeat_spread_max: 1.5 } as const;

/** An experiment with its plan read and every arm's effective plan validated. */
export interface LoadedExperiment {
  experiment: Experiment;
  /** Absolute path of the plan file. */
  planPath: string;
  plan: Plan;
  /** The plan each arm runs, in the order of `experiment.arms`. */
  armPlans: Plan[];
}
