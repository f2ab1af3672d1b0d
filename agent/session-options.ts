// How an agent identifies itself and reaches the coordinator, and what it says of itself on every
// link: the options of a session (session.ts) and of a leftover spool's upload (leftover.ts).
import { randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { AgentMessage, CoordinatorMessage } from '../shared/protocol.js';
import { PROTOCOL_VERSION } from '../shared/protocol.js';
import type { SelfTestFigures } from '../shared/self-test.js';

/** This process: a coordinator tells a live resume (same epoch) from a restarted process by it. */
export const EPOCH = randomBytes(8).toString('hex');

/** How an agent identifies itself and reaches the coordinator. */
export interface SessionOptions {
  coordinatorUrl: string;
  token: string;
  agentId: string;
  host: string;
  clockDomainId: string;
  clockDomainDeclared: boolean;
  clock: Clock;
  connectTimeoutMs: number;
  /** With the coordinator gone and a spool kept: how long to keep offering it (agent/outlive.ts). */
  coordinatorWaitMs: number;
  ca?: Buffer;
  /** Where finished requests are spooled, and where a restarted agent looks for a spool to upload. */
  spoolDir: string;
  /** Adopt the coordinator's clock anchor when it runs on this machine (off when a test shifts our clock). */
  shareHostAnchor: boolean;
  /** Worker threads that stripe this agent's share (1: the main thread runs it). */
  workers: number;
  /** What the agent measured of itself before joining (null: skipped or failed); sent in every hello. */
  selfTest?: SelfTestFigures | null;
  /** Test hook: wait this long before answering `arm` (proves the arm deadline). */
  armDelayMs: number;
  /** Test hook: called when a run's plan arrives (agent --test-stall counts runs with it). */
  onPlan?: () => void;
  /** After a release (or a coordinator that went away), wait for the next coordinator instead of exiting. */
  stay: boolean;
  log(line: string): void;
}

export type Hello = Extract<AgentMessage, { type: 'hello' }>;

/** The hello this process says on a new link. */
export function helloOf(opts: SessionOptions): Hello {
  return {
    type: 'hello',
    protocol: PROTOCOL_VERSION,
    agent_id: opts.agentId,
    host: opts.host,
    pid: process.pid,
    clock_domain_id: opts.clockDomainId,
    clock_domain_declared: opts.clockDomainDeclared,
    clock_anchor_uncertainty_ns: opts.clock.anchorUncertaintyNs,
    workers: opts.workers,
    ...(opts.selfTest ? { self_test: opts.selfTest } : {}),
    epoch: EPOCH,
  };
}

/**
 * The answer to a clock probe: T2 when it was read, T3 just before it goes out, and (once a run
 * has armed) how far the run timeline was slewed back at T2 (`correctionNs`).
 */
export function probeReply(
  m: Extract<CoordinatorMessage, { type: 'probe' }>,
  clock: Clock,
  correctionNs: () => number | undefined = () => undefined,
): AgentMessage {
  const t2 = clock.nowNs();
  const correction = correctionNs();
  return {
    type: 'probe_reply',
    seq: m.seq,
    t1_ns: m.t1_ns,
    t2_ns: t2,
    t3_ns: clock.nowNs(),
    ...(correction !== undefined && { clock_correction_ns: Math.round(correction) }),
  };
}
