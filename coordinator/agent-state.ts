// What the coordinator knows of one agent during a run: kept by the agent's channel (channel.ts,
// which implements it), read by run.json (artifacts/run-json.ts) and the status policy, in a
// module of its own so they do not import each other.

import type { HeldOutResidual, OffsetLine } from '../figures/clock-types.js';
import type { Clock, OffsetEstimate, ProbeSample } from '../shared/clock.js';
import type { AgentHealth, WarmUp } from '../shared/protocol.js';
import type { AgentPhase } from './phases.js';
import type { AgentConn } from './server.js';

/** A stretch of time an agent's link was down during a run (seconds after the start, coordinator clock). */
export interface Outage {
  from_s: number;
  to_s: number | null;
  reason: string;
  /** true: it reconnected and carried on; false: the grace ran out and it was lost. */
  resumed: boolean;
}

/** Per-agent state during a run. */
export interface AgentState {
  /** Position in agents[] (the collector's and the share's index); kept across reconnects. */
  readonly index: number;
  /** The run's channel to the agent (its phase is the truth the three flags below read). */
  readonly channel: {
    readonly phase: AgentPhase;
    readonly done: boolean;
    readonly epoch: string | undefined;
    readonly hwm: number;
    /** One clock probe through the channel (its own number `seq`): the run's only way to probe the agent. */
    probe(clock: Clock, seq: number): Promise<ProbeSample>;
  };
  /** The agent's current link (the channel's). */
  readonly conn: AgentConn;
  /** The link is down and the agent is within its grace: not lost, not live. */
  readonly reconnecting: boolean;
  outages: Outage[];
  offset: OffsetEstimate;
  startLocalNs: bigint;
  prepMs: number;
  /** Its warm-up against the target before the load (absent from old agents, and in a recovered run). */
  warmUp?: WarmUp | undefined;
  firstSendErrorNs: number | null;
  health: AgentHealth | null;
  /** Its `final` is merged. */
  readonly final: boolean;
  readonly lost: boolean;
  /** Why it handed over early (its process was stopped: SIGTERM), if it did: its final is merged, its share is short. */
  terminated: string | null;
  failure: string | null;
  /** Probes taken during the run (one per second), for the drift fit. */
  runProbes: ProbeSample[];
  /** How far the agent says it has slewed its run timeline back (its last heartbeat), ns. */
  clockCorrectionNs: number | null;
  /** Each second's steering of the agent's timeline (clock/slew.ts): seconds since the start, drift, error left. */
  slewSteps: { t_s: number; drift_ppm: number; error_ns: number }[];
  /** Its offset as a line through its recent in-run probes (clock/slew.ts), refitted at each one. */
  offsetLine: OffsetLine | null;
  /**
   * An agent of a declared common clock domain (not steered): each second, how far it sat from the
   * domain's reference (clock/policy.ts domainResidualNs), with its drift against our clock.
   */
  domainSteps: { t_s: number; drift_ppm: number; error_ns: number }[];
  /**
   * The offset the agent started and is aligned with (agent clock minus ours at the start instant):
   * for a steered agent its pre-start line's value there (clock/pre-start.ts), else offset_ns.
   */
  startOffsetNs?: number;
  /** A steered agent's held-out probes after its start: its run timeline measured by probes that did not steer (clock/held-out.ts). */
  heldOut?: HeldOutResidual[];
  /** Records a restarted process of a lost agent handed over from its spool. */
  recoveredRecords: number;
  /** The restarted process's `final` (its rebuilt histograms) is merged: a second one is not. */
  spoolHandedOver: boolean;
  lastHeardMs: number;
}
