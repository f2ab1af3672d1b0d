// The validity gates' shapes (domain.md §5): each gate is a list of named checks, each decided by
// the evidence it carries. A check that applies but cannot be evaluated says so and never counts
// as a pass; a check the plan does not call for (no fairness header sent, nothing scraped, no cache
// claim to prove) is not_applicable and leaves the gate alone — so a gate can pass against a plain
// vLLM, llama.cpp or a provider, and a gate that cannot pass is never one users learn to ignore.
import type { OutputTokenSource } from '../../shared/metrics.js';
import type { PromptLengthCheck, PromptLengthMethod, Slo } from '../../shared/plan.js';
import type { ResidualSummary } from '../clock-types.js';
import type { PromptExactness } from '../prompt-exactness.js';
import type { ClassVerdict } from '../slo-verdict.js';

/** Why an agent's clock residual was measured: it was steered, or it declared a common clock domain. */
export type ClockResidualBasis = 'steered' | 'declared-domain';
/** One agent as the clock_residual check reads it. */
export interface ClockResidualEntry {
  agentId: string;
  residualMaxNs: number | null;
  uncertaintyNs: number;
  basis?: ClockResidualBasis;
  /** A steered agent: what its held-out probes measured over the whole run (clock/held-out.ts). */
  heldOut?: ResidualSummary;
}
/** How a check came out. */
export type CheckStatus = 'pass' | 'fail' | 'not_evaluated' | 'not_applicable';

/** One named check with the evidence that decided it. */
export interface Check {
  name: string;
  status: CheckStatus;
  evidence: Record<string, unknown>;
  /** Why it failed or could not be evaluated, in one sentence (null when it passed). */
  reason: string | null;
}

/** A gate: valid only when at least one check applied and every check that applied passed. */
export interface Gate {
  valid: boolean;
  /** Names of the checks that applied (every status but not_applicable), in check order. */
  applied: string[];
  /** Per applied check, why the run calls for it. */
  applies_because: Record<string, string>;
  /** The checks the run did not call for, each with why (the check's reason). */
  not_applicable: { name: string; reason: string }[];
  checks: Check[];
  definitions: Record<string, string>;
}

/** Figures of one class in one window, as run.json's `classes` reports them. */
export interface WindowEvidence {
  requests: number;
  completed: number;
  slo_attainment: number | null;
  ttft_p95_ms: number | null;
  tpot_p95_ms: number | null;
  e2e_p95_ms: number | null;
  /** The window's successful-only figure of each SLO table bound, by its key (absent: not read). */
  bounds?: Record<string, number | null>;
}

/** What the gates know about one plan class. */
export interface ClassEvidence {
  name: string;
  openLoop: boolean;
  /** Arrivals the global schedule plans (null in a closed loop, which plans no count). */
  planned: number | null;
  /** Open-loop requests the agents dispatched. */
  dispatched: number;
  statusCounts: Record<string, number>;
  httpCounts: Record<string, number>;
  scheduleLagP99Ms: number | null;
  scheduleLagMaxMs: number | null;
  startSpreadMs: number | null;
  fairnessId: string | null;
  priority: number | null;
  /** The class's fixed lengths, or a description when each request has its own. */
  inputTokens: number | string;
  outputTokens: number | string;
  /** False for an API that generates no tokens (embeddings): it has no output count to check (absent: true). */
  generates?: boolean;
  ignoreEos: boolean;
  /** `trace`: a replayed trace, whose prompts share what its hash ids say; `sessions`: conversations re-sending their history. */
  cache: 'unique' | 'shared' | 'trace' | 'sessions';
  /** Trace and sessions classes: the prefix-cache hit tokens the replayed rows or ok turns imply; null otherwise. */
  impliedPrefixHitTokens?: number | null;
  ok: number;
  promptTokensMin: number | null;
  promptTokensMax: number | null;
  promptOutside: number;
  /** Successful requests with usage planned exactly, those whose prompt_tokens differ from the plan, and the largest difference. */
  promptExactPlanned?: number;
  promptDifferExact?: number;
  promptMaxDifference?: number;
  /** Requests planned within a tolerance only (a session's later turns) outside it. */
  promptOutsideInexact?: number;
  /** The sample of real bodies counted before load (null: not counted). */
  promptLengthCheck?: PromptLengthCheck | null;
  /** Why that count failed (null: it did not, or nothing could count). */
  promptLengthCheckError?: string | null;
  /** Which requests were built exact on the target and which not, and why (null: never meant to be exact). */
  promptExactness?: PromptExactness | null;
  /** Successful requests whose server reported no prompt_tokens. */
  promptUnreported: number;
  /** How the class's prompts were sized, and what the target's tokenizer counted (null: not counted). */
  promptLengthMethod: PromptLengthMethod;
  calibratedPromptTokens: number | null;
  completionMismatch: number;
  /** Successful requests by where their completion_tokens came from. */
  outputSources: Record<OutputTokenSource, number>;
  /** target.require_usage: a stream without usage is a failure. */
  requireUsage: boolean;
  /** prompt.canary, and the responses checked and passed. */
  canary: boolean;
  canarySamples: number;
  canaryPassed: number;
  http200NotOk: number;
  slo: Slo | null;
  /** run.json's classes.<c>.slo_verdict (null without an SLO; absent where not computed). */
  sloVerdict?: ClassVerdict | null;
  /** `all` and every plan window. */
  windows: Record<string, WindowEvidence>;
}

/** The capture health of one scrape source (run.json server.sources[]). */
export interface SourceEvidence {
  name: string;
  ticks_due: number;
  scrapes: number;
  samples_ok: number;
  errors: number;
  error_counts: Record<string, number>;
  first_errors: unknown[];
  skipped_ticks: number;
  pre_snapshot: string;
  post_snapshot: string;
  restarts: number | null;
}

/** Everything the gates read. */
export interface ValidityInput {
  classes: ClassEvidence[];
  scheduleSha256: string;
  offeredScheduleSha256: string | null;
  /** Why the offered schedule hash could not be recomputed (sampled records), or absent when it was. */
  offeredScheduleNotEvaluable?: string;
  abortReason: string | null;
  clientLimited: boolean;
  clientReasons: string[];
  lostAgents: string[];
  sources: SourceEvidence[];
  /** The server block's window `all`. */
  server: Record<string, number | boolean | null>;
  /** fairness_id → priority labels seen on the gateway's flow-control series. */
  fairnessPriorities: Record<string, string[]>;
  /** Whether flow control should engage; the check exists only when this is declared. */
  expectFlowControlEngaged?: boolean;
  /**
   * Agents whose clocks were steered during the run, or checked against their declared common
   * domain (basis); the clock_residual check exists only with one.
   */
  clockResiduals?: ClockResidualEntry[];
  /** --clock-tolerance-ms in ns (read with clockResiduals). */
  clockToleranceNs?: number;
}

/** A gate from its checks. */
export function gate(checks: Check[], definitions: Record<string, string>, why: Record<string, string> = {}): Gate {
  const applied = checks.filter((c) => c.status !== 'not_applicable');
  return {
    valid: applied.length > 0 && applied.every((c) => c.status === 'pass'),
    applied: applied.map((c) => c.name),
    applies_because: Object.fromEntries(applied.map((c) => [c.name, why[c.name] ?? 'every run calls for it'])),
    not_applicable: checks.filter((c) => c.status === 'not_applicable').map((c) => ({ name: c.name, reason: c.reason ?? '' })),
    checks,
    definitions,
  };
}

/** A check from the problems found: pass when none, else fail with them as the reason. */
export function decide(name: string, problems: string[], evidence: Record<string, unknown>): Check {
  return { name, status: problems.length === 0 ? 'pass' : 'fail', evidence, reason: problems.length === 0 ? null : problems.join('; ') };
}

/** A check that could not be evaluated, and why. */
export function notEvaluated(name: string, reason: string, evidence: Record<string, unknown> = {}): Check {
  return { name, status: 'not_evaluated', evidence, reason };
}

/** A check the run does not call for, and why: it leaves the gate's verdict alone. */
export function notApplicable(name: string, reason: string, evidence: Record<string, unknown> = {}): Check {
  return { name, status: 'not_applicable', evidence, reason };
}
