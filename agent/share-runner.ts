// What the session drives for one run, whichever runner runs it (AgentRun on the main thread or
// WorkerPool over threads). Types only, so the runners and the session share them without a cycle.
import type { WarmUp } from '../shared/protocol.js';
import type { SpoolHeader } from './spool.js';

/** Where a run spools its finished requests. */
export interface SpoolTarget {
  dir: string;
  header: SpoolHeader;
}

/** One run of this agent's share, as the session sees it. */
export interface ShareRunner {
  /** Opens the spool and warms the connection pool up; resolves with a line for the log. */
  prepare(spool: SpoolTarget): Promise<string>;
  /** The warm-up's outcome once prepare() resolved (undefined before). */
  warmUp(): WarmUp | undefined;
  /** Requests the open-loop classes will send. */
  plannedRequests(): number;
  /** Waits for the start instant (this agent's wall clock), runs, hands over `final`. */
  start(startLocalNs: bigint): Promise<void>;
  stop(reason: string): void;
  /**
   * The agent's process is going away (SIGTERM): stop the load and hand over what was measured,
   * `final` saying so. No effect once the run is already stopping.
   */
  terminate(reason: string): void;
  linkLost(reason: string): void;
  /** Slews the run timeline back at `ratePpm` from now on (continuously: no step). */
  slew(ratePpm: number): void;
  /** How far the run timeline is slewed back from the raw clock now (ns); undefined before the run armed. */
  clockCorrectionNs(): number | undefined;
  discardSpool(): Promise<void>;
}
