// The run an agent is in, as the session (session.ts) holds it: its phase (run-phase.ts) and what
// the hand-over waits on.
import type { RunPhase } from './run-phase.js';
import type { ShareRunner } from './share-runner.js';

/** The run this agent is in, from `welcome` until it handed over (or gave up). */
export interface CurrentRun {
  runId: string;
  graceMs: number;
  /** Where the run is (run-phase.ts): the only record of it. */
  phase: RunPhase;
  runner?: ShareRunner;
  /** The load and its hand-over, once armed (a release waits for it). */
  handOver?: Promise<void>;
  /** Resolves once an ack covers `final` (set when the runner put it in the outbox). */
  finalAcked?: Promise<void>;
  /** Sampled records (plan.records.sample_every): the spool is the only copy of most records, so it is kept. */
  keepRecords?: boolean;
  /** Acks heard in this run, and those that did not advance the mark (each answers a resent duplicate). */
  acks: { heard: number; repeated: number; mark: number };
  /** Resolves when the run is given up (the coordinator refused it or stayed away past the grace). */
  gaveUp: Promise<void>;
  giveUp: () => void;
}

export function newRun(runId: string, graceMs: number): CurrentRun {
  let giveUp = (): void => {};
  const gaveUp = new Promise<void>((r) => (giveUp = r));
  return { runId, graceMs, phase: 'welcomed', gaveUp, giveUp, acks: { heard: 0, repeated: 0, mark: 0 } };
}
