// What the session drives for one run: the agent's share run on the main thread (AgentRun), or
// striped over worker threads (WorkerPool). Both speak the same protocol messages upward.
import type { Clock } from '../shared/clock.js';
import type { Plan } from '../shared/plan.js';
import type { AgentMessage } from '../shared/protocol.js';
import type { Share } from '../shared/shares.js';
import { AgentRun } from './run.js';
import type { SpoolHeader } from './spool.js';
import { WorkerPool } from './worker-pool.js';

/** Where a run spools its finished requests. */
export interface SpoolTarget {
  dir: string;
  header: SpoolHeader;
}

/** One run of this agent's share, as the session sees it. */
export interface ShareRunner {
  /** Opens the spool and warms the connection pool up; resolves with a line for the log. */
  prepare(spool: SpoolTarget): Promise<string>;
  /** Requests the open-loop classes will send. */
  plannedRequests(): number;
  /** Waits for the start instant (this agent's wall clock), runs, hands over `final`. */
  start(startLocalNs: bigint): Promise<void>;
  stop(reason: string): void;
  /** The coordinator acknowledged record batch `seq`. */
  acked(seq: number): void;
  linkLost(reason: string): void;
  discardSpool(): Promise<void>;
  /** True once `final` went out after every record was acknowledged. */
  readonly handedOver: boolean;
}

/** The runner for `workers` threads (1: no threads at all, the main thread runs the share). */
export function createRunner(
  runId: string,
  plan: Plan,
  share: Share,
  clock: Clock,
  send: (m: AgentMessage) => void,
  workers: number,
): ShareRunner {
  return workers <= 1 ? new AgentRun(runId, plan, share, clock, send) : new WorkerPool(runId, plan, share, clock, send, workers);
}
