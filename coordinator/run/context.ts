// What a run holds while it goes, once its agents are known: its channels (one per agent, which
// hold what the run knows of each), the collector, the clock decision and steering, the stop
// reason, the run's events. The parts of a run (start, dispatch, resume, losses, watchdog, write)
// are functions over it.
import type { Clock } from '../../shared/clock.js';
import type { Plan } from '../../shared/plan.js';
import type { GlobalSchedule } from '../../shared/schedule.js';
import { buildSchedule } from '../../shared/schedule.js';
import type { AbortWatch } from '../abort-rule.js';
import type { CacheReset } from '../cache-reset.js';
import type { AgentChannel } from '../channel.js';
import type { ClockDecision } from '../clock/policy.js';
import type { ClockSteering } from '../clock/steering.js';
import type { Collector } from '../collector.js';
import type { HeadroomReport } from '../headroom/index.js';
import type { Recovery } from '../journal/recovery.js';
import type { RunJournal } from '../journal/run-journal.js';
import type { LocalLayout } from '../local-layout.js';
import type { RunPhase } from '../phases.js';
import { runMayMove } from '../phases.js';
import type { Scraper } from '../scrape/scraper.js';
import type { AgentConn } from '../server.js';
import type { RunTraces } from '../traces/run-traces.js';
import type { EmbeddedSim } from './embedded-sim.js';
import type { RunOnFleetOptions } from './options.js';

/** One run's state after its agents are known. */
export class RunState {
  /** One channel per agent, from the welcome to the run's end (it owns every subscription on the link). */
  channels: AgentChannel[] = [];
  /** The channels once every agent prepared (the agents the load runs on). */
  readonly states: AgentChannel[] = [];
  phase: RunPhase = 'open';
  readonly schedule: GlobalSchedule;
  collector: Collector | undefined;
  /** The plan's abort rules, watched once the load starts (null without rules). */
  abortWatch: AbortWatch | null = null;
  startNs = 0n;
  abortReason: string | null = null;
  /** What was done to the server's cache before the load (cache-reset.ts). */
  cacheReset: CacheReset | undefined;
  /** plan.traces: the run's span receiver, joined to the requests when the run is written. */
  traces: RunTraces | undefined;
  /** How the fleet's local agents were laid out in processes (null: not spawned here). */
  localLayout: LocalLayout | null = null;
  readonly runEvents: string[] = [];
  decision: ClockDecision | undefined;
  /** The steering of drifting agents' clocks (clock/steering.ts), from the alignment decision on. */
  steering: ClockSteering | undefined;
  /** Wakes waitForFinals early (a final merged, an agent lost, a stop). */
  wake: () => void = () => {};
  /** In-run clock probes that got no answer in time (counted, not silently dropped). */
  probeFailures = 0;
  /** True once run.json (any status) is written. */
  wroteRunJson = false;
  /** The run's write-ahead journal, from the chosen start on (null before, and in runs that never start). */
  journal: RunJournal | null = null;
  /** Set when the journal failed: the run takes nothing more and ends with this error. */
  fault: Error | null = null;
  /** Where the agents connect (the fleet's address), kept in the journal for a recovery. */
  listenUrl: string | null = null;
  /** The embedded engine-sim's flags and environment, when the run started one: a recovery starts it again at its address. */
  embeddedSim: EmbeddedSim | null = null;
  /** Set when this run was recovered from its journal by a restarted coordinator (run.json `recovered`). */
  recovery: Recovery | null = null;

  constructor(
    readonly opts: RunOnFleetOptions,
    readonly plan: Plan,
    readonly runId: string,
    readonly dir: string,
    readonly clock: Clock,
    readonly agents: readonly AgentConn[],
    /** Agents this run may lose before it aborts: --max-agent-loss less those the fleet already lacks. */
    readonly lossBudget: number,
    readonly scraper: Scraper,
    readonly headroom: HeadroomReport | null = null,
  ) {
    this.schedule = buildSchedule(plan);
  }

  moveRun(to: RunPhase): void {
    if (runMayMove(this.phase, to)) this.phase = to;
  }

  /** Seconds since the start instant on the coordinator's clock. */
  elapsedS(): number {
    return Math.round(Number(this.clock.nowNs() - this.startNs) / 1e6) / 1e3;
  }

  /** The start instant in the run's clock domain. */
  runStartNs(): bigint {
    return this.startNs + BigInt(this.decision?.alignment === 'explicit-common-clock-domain' ? this.decision.domainOffsetNs : 0);
  }

  /**
   * Why the run takes no new message from its agents (its journal failed, or it is closing), or
   * null while it does. Short: it is the reason of a WebSocket close (at most 123 bytes).
   */
  refusal(): string | null {
    if (this.fault) return `the coordinator's journal failed (${String(this.fault.cause ?? 'EIO')}): not taken, keep it in the spool`;
    if (this.phase !== 'open') return 'the run is closed: not taken, keep it in the spool';
    return null;
  }

  // Agents whose intervals a second waits for: reconnecting ones too (their data is on its way).
  liveIndices(): number[] {
    return this.states.filter((s) => !s.lost && !s.final).map((s) => s.index);
  }

  /** Tells every agent still running to stop (once: the first reason is the run's). */
  stopAll(reason: string): void {
    if (this.abortReason === null) {
      this.abortReason = reason;
      this.journal?.event({ type: 'stop', reason });
    }
    // A reconnecting agent hears it when it rejoins (rejoin says it again).
    for (const s of this.states) if (!s.final && !s.lost) s.stop(reason);
    this.wake();
  }
}
