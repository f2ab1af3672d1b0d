// What one run is asked to do, and what it answers: the types every part of a run reads.

import type { Plan } from '../../shared/plan.js';
import type { OnClockMismatch } from '../clock/policy.js';
import type { FleetOptions } from '../fleet.js';
import type { HeadroomOptions } from '../headroom/index.js';
import type { MetricsEndpoint } from '../live/metrics-server.js';
import type { RunStatus } from '../run-status.js';

/** What one run on a fleet needs besides the fleet. */
export interface RunOnFleetOptions {
  plan: Plan;
  outDir: string;
  simArgs: readonly string[];
  clockToleranceNs: number;
  onClockMismatch: OnClockMismatch;
  maxStartSkewNs: number;
  maxAgentLoss: number;
  /** How long an agent whose link was cut mid-run is held as reconnecting before it is lost (0: at once). */
  agentGraceMs: number;
  /** Set when the run is one of an experiment's; written into run.json as `experiment`. */
  experiment?: { name: string; arm: string; repeat: number };
  /** Whether the gateway's flow control should engage in this run (an experiment arm's expectation); slo_proof checks it only when set. */
  expectFlowControlEngaged?: boolean;
  log(line: string): void;
  progress(line: string): void;
  /** When set (stderr is a terminal), the live view is this block redrawn each second instead of progress lines. */
  liveBlock?: ((lines: string[]) => void) | undefined;
  /** Serves the run's live client-side figures at /metrics while it goes. */
  metrics?: MetricsEndpoint | undefined;
  /** The headroom check before any request (coordinator/headroom); absent: not checked. */
  headroom?: HeadroomOptions;
}

/** What `coordinator start` was asked to do: one run on a fleet of its own. */
export type RunOptions = RunOnFleetOptions & FleetOptions;

/** The outcome the CLI reports. */
export interface RunResult {
  dir: string;
  status: RunStatus;
  summaryLines: string[];
}

/** How long an agent has to prepare (build its schedule, open its spool) after it gets the plan. */
export const PREPARE_TIMEOUT_MS = 30_000;
/** The cause that marks an LF_AGENT_LOST thrown before any load was sent (the run can be retried). */
export const BEFORE_START = 'before-start';
