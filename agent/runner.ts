// What the session drives for one run: the agent's share run on the main thread (AgentRun), or
// striped over worker threads (WorkerPool). Both speak the same protocol messages upward.
import type { Clock } from '../shared/clock.js';
import type { Plan } from '../shared/plan.js';
import type { AgentMessage } from '../shared/protocol.js';
import type { Share } from '../shared/shares.js';
import { AgentRun } from './run.js';
import type { ShareRunner } from './share-runner.js';
import { WorkerPool } from './worker-pool.js';

/** The runner for `workers` threads (1: no threads at all, the main thread runs the share). */
export function createRunner(
  runId: string,
  plan: Plan,
  share: Share,
  clock: Clock,
  send: (m: AgentMessage) => void,
  workers: number,
): ShareRunner {
  // Tracked so a SIGTERM can end the run through its hand-over (terminate.ts).
  return workers <= 1 ? new AgentRun(runId, plan, share, clock, send) : new WorkerPool(runId, plan, share, clock, send, workers);
}
