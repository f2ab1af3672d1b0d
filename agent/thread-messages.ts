// The messages between the agent's main thread (WorkerPool) and its worker threads
// (worker-thread.ts), in a module of their own so neither side imports the other.
import type { ClockAnchor } from '../shared/clock.js';
import type { Plan } from '../shared/plan.js';
import type { AgentMessage, WarmUp } from '../shared/protocol.js';
import type { Share } from '../shared/shares.js';
import type { SpoolTarget } from './share-runner.js';

/** What a worker thread starts with (its `workerData`). */
export interface ThreadInit {
  runId: string;
  plan: Plan;
  share: Share;
  anchor: ClockAnchor;
  part: number;
  /** Agents of the fleet (the share before it was striped over threads): sampled records' stride. */
  fleetAgents: number;
}

/** Main thread → worker thread. */
export type ThreadCommand =
  | { cmd: 'prepare'; spool: SpoolTarget }
  | { cmd: 'start'; startLocalNs: bigint }
  | { cmd: 'slew'; ratePpm: number }
  | { cmd: 'stop'; reason: string }
  | { cmd: 'link-lost'; reason: string }
  | { cmd: 'discard' };

/** Worker thread → main thread. */
export type ThreadEvent =
  | { kind: 'prepared'; note: string; planned: number; warmUp?: WarmUp | undefined }
  | { kind: 'msg'; msg: AgentMessage }
  | { kind: 'ended' }
  | { kind: 'failed'; message: string };
