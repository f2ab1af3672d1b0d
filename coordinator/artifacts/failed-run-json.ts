// run.json for a run that failed before any load (the target did not start, a clock probe or an
// agent's preparation failed): the evidence of what happened instead of an empty directory —
// status "failed", the error with its code, the plan as far as it was resolved and where each
// agent had got to.
import { join } from 'node:path';
import { writeFileAtomic } from '../../shared/atomic-file.js';
import { LoadfleetError } from '../../shared/errors.js';
import { stringifyExact } from '../../shared/json.js';
import type { Plan } from '../../shared/plan.js';
import { type FailedRunJson, RUN_SCHEMA } from '../../shared/run-schema.js';

/** Where one agent had got to when the run failed. */
export interface AgentProgress {
  agent_id: string;
  host: string;
  /** joined | probed | preparing | prepared | failed */
  state: string;
  /** What the agent said or what went wrong with it, when anything did. */
  detail: string | null;
}

const DEFINITIONS: Record<string, string> = {
  status: 'failed: the run ended before any load was sent, for the reason in status_reason; no request was made',
  error: 'the error that ended the run: its stable code (shared/errors.ts) and message',
  'agents[].state':
    'how far the agent got: joined (in the fleet, not yet probed), probed (its clock measured), preparing (given the plan), prepared (ready to arm), failed (it reported a failure or its link closed)',
  'agents[].detail': 'what the agent reported, or what went wrong with it (null when nothing did)',
  plan: 'the plan as far as it was resolved when the run failed (target and prompt_calibration once known)',
  started_at: 'when the coordinator began this run (before the target, clocks and agents were made ready)',
  failed_at: 'when the coordinator gave the run up',
  requests: 'requests sent: always 0, since a failed run ended before any load',
};

/** Writes run.json with status "failed". */
export async function writeFailedRunJson(input: {
  dir: string;
  runId: string;
  plan: Plan;
  startedAt: Date;
  error: unknown;
  agents: readonly AgentProgress[];
}): Promise<void> {
  const err = input.error;
  const message = err instanceof Error ? err.message : String(err);
  const run: FailedRunJson = {
    schema: RUN_SCHEMA,
    run_id: input.runId,
    status: 'failed',
    status_reason: message,
    error: { code: err instanceof LoadfleetError ? err.code : 'LF_INTERNAL', message },
    started_at: input.startedAt.toISOString(),
    failed_at: new Date().toISOString(),
    plan: input.plan,
    agents: [...input.agents],
    requests: 0,
    field_definitions: DEFINITIONS,
  };
  await writeFileAtomic(join(input.dir, 'run.json'), `${stringifyExact(run, 2)}\n`);
}
