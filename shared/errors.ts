// One errors module for the whole product: a base class with a stable `code` per failure, so
// logs, tests and users can match on codes rather than on message wording.

/** Stable error codes; never renumber or rename (users grep for them). */
export const ErrorCode = {
  PLAN_INVALID: 'LF_PLAN_INVALID',
  PLAN_UNREADABLE: 'LF_PLAN_UNREADABLE',
  EXPERIMENT_INVALID: 'LF_EXPERIMENT_INVALID',
  SWEEP_INVALID: 'LF_SWEEP_INVALID',
  USAGE: 'LF_USAGE',
  AUTH_REFUSED: 'LF_AUTH_REFUSED',
  PROTOCOL_MISMATCH: 'LF_PROTOCOL_MISMATCH',
  BAD_FRAME: 'LF_BAD_FRAME',
  JOIN_TIMEOUT: 'LF_JOIN_TIMEOUT',
  ARM_TIMEOUT: 'LF_ARM_TIMEOUT',
  AGENT_LOST: 'LF_AGENT_LOST',
  AGENT_FAILED: 'LF_AGENT_FAILED',
  TARGET_START_FAILED: 'LF_TARGET_START_FAILED',
  ABORTED: 'LF_ABORTED',
  INTERNAL: 'LF_INTERNAL',
  REPORT_INPUT: 'LF_REPORT_INPUT',
  /** An agent joined under an id that is already connected to the fleet. */
  DUPLICATE_AGENT: 'LF_DUPLICATE_AGENT',
  /** ws:// against a TLS coordinator, wss:// against a plain one, or a certificate the agent does not trust. */
  TLS_MISMATCH: 'LF_TLS_MISMATCH',
  /** More agents left the fleet between runs than --max-agent-loss allows. */
  FLEET_SHORT: 'LF_FLEET_SHORT',
  /** Results could not be uploaded to object storage (bad URL, missing credentials, a refused or failed PUT). */
  UPLOAD_FAILED: 'LF_UPLOAD_FAILED',
  /** A share of the plan projects beyond its agent's measured limits (--headroom refuse or strict); nothing was sent. */
  HEADROOM_REFUSED: 'LF_HEADROOM_REFUSED',
  /** `compare` of runs of different plans or schedules, without --allow-different-plans. */
  NOT_COMPARABLE: 'LF_NOT_COMPARABLE',
  /** target.reset_cache_between_runs is set but the server answered neither reset endpoint. */
  CACHE_RESET_UNAVAILABLE: 'LF_CACHE_RESET_UNAVAILABLE',
  /** A per-agent state machine (coordinator/phases.ts, agent/run-phase.ts) was asked for a move its table does not have. */
  PHASE_MOVE: 'LF_PHASE_MOVE',
  /** Messages an agent sent were never acknowledged: its outbox started a new run's sequence space before an ack covered them. */
  UNACKED: 'LF_UNACKED',
  /** An agent's spool directory cannot be written (full, read-only, an I/O error): it stops offering load so nothing finished goes unrecorded. */
  SPOOL_WRITE: 'LF_SPOOL_WRITE',
  /** The run's journal could not be written or flushed (a full disk, an I/O error): nothing past it was acknowledged. */
  JOURNAL_WRITE: 'LF_JOURNAL_WRITE',
  /** A run directory's journal is missing or unreadable, so the run cannot be recovered from it. */
  JOURNAL_UNREADABLE: 'LF_JOURNAL_UNREADABLE',
  /** The receiver of the server's spans could not listen on an address plan.traces names (taken, or not this machine's). */
  TRACES_LISTEN: 'LF_TRACES_LISTEN',
  /** More agents than --max-agent-loss got no answer from the target at their warm-up: the run stopped before any load. */
  TARGET_UNREACHABLE: 'LF_TARGET_UNREACHABLE',
} as const;

/** One of the stable codes above. */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Process exit codes, named so scripts can rely on them. */
export const ExitCode = {
  OK: 0,
  FAILURE: 1,
  INVALID_INPUT: 2,
  ABORTED: 3,
  /** The run completed but a class missed its declared SLO, and --fail-on-slo asked for a failing exit. */
  SLO_MISSED: 4,
  /** `compare --fail-on-regression` found a gating figure regressed beyond noise and threshold. */
  REGRESSED: 5,
  /** loadfleet-k8s: the run completed degraded (an agent lost within --max-agent-loss, a clock fallback, …: run.json's status_reason). */
  DEGRADED: 6,
  INTERRUPTED: 130,
} as const;

/** Base error: a code, a short message, and an exit code for the CLI's one top-level catch. */
export class LoadfleetError extends Error {
  readonly code: ErrorCodeValue;
  readonly exitCode: number;
  /** Extra lines shown under the message (e.g. every plan problem). */
  readonly details: readonly string[];

  constructor(code: ErrorCodeValue, message: string, options: { exitCode?: number; details?: readonly string[]; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LoadfleetError';
    this.code = code;
    this.exitCode = options.exitCode ?? ExitCode.FAILURE;
    this.details = options.details ?? [];
  }
}

/** A plan that failed validation; `problems` are `<json path>: <what is wrong>` lines. */
export class PlanInvalidError extends LoadfleetError {
  constructor(problems: readonly string[], source = 'plan') {
    super(ErrorCode.PLAN_INVALID, `${source} is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'})`, {
      exitCode: ExitCode.INVALID_INPUT,
      details: problems,
    });
  }
}

/** Renders any error for a terminal: code, message, then one indented line per detail. */
export function formatError(err: unknown): string {
  if (err instanceof LoadfleetError) {
    return [`error ${err.code}: ${err.message}`, ...err.details.map((d) => `  ${d}`)].join('\n');
  }
  const e = err instanceof Error ? err : new Error(String(err));
  return `error ${ErrorCode.INTERNAL}: ${e.stack ?? e.message}`;
}

/** Exit code for an error caught at the top of a CLI. */
export function exitCodeOf(err: unknown): number {
  return err instanceof LoadfleetError ? err.exitCode : ExitCode.FAILURE;
}
