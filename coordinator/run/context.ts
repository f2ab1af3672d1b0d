// What a run holds while it goes, once its agents are known: its channels (one per agent, which
// hold what the run knows of each), the collector, the clock decision, the stop reason, the
// run's events. The parts of a run (start, dispatch, resume, losses, watchdog, write) are
// functions over it. The clock steering of a drifting agent lives here too, beside the state it
// reads.
import type { Clock, ProbeSample } from '../../shared/clock.js';
import { hostClockDomain } from '../../shared/clock.js';
import type { Plan } from '../../shared/plan.js';
import type { GlobalSchedule } from '../../shared/schedule.js';
import { buildSchedule } from '../../shared/schedule.js';
import type { AbortWatch } from '../abort-rule.js';
import type { AgentState } from '../agent-state.js';
import type { CacheReset } from '../cache-reset.js';
import type { AgentChannel } from '../channel.js';
import type { ClockDecision } from '../clock-policy.js';
import { domainResidualNs } from '../clock-policy.js';
import { fitOffsetLine, slewStep } from '../clock-slew.js';
import type { Collector } from '../collector.js';
import type { HeadroomReport } from '../headroom/index.js';
import type { LocalLayout } from '../local-layout.js';
import type { RunPhase } from '../phases.js';
import { runMayMove } from '../phases.js';
import type { Scraper } from '../scrape/scraper.js';
import type { AgentConn } from '../server.js';
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
  /** How the fleet's local agents were laid out in processes (null: not spawned here). */
  localLayout: LocalLayout | null = null;
  readonly runEvents: string[] = [];
  decision: ClockDecision | undefined;
  /** Wakes waitForFinals early (a final merged, an agent lost, a stop). */
  wake: () => void = () => {};
  /** In-run clock probes that got no answer in time (counted, not silently dropped). */
  probeFailures = 0;
  /** True once run.json (any status) is written. */
  wroteRunJson = false;

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

  // Agents whose intervals a second waits for: reconnecting ones too (their data is on its way).
  liveIndices(): number[] {
    return this.states.filter((s) => !s.lost && !s.final).map((s) => s.index);
  }

  /** Tells every agent still running to stop (once: the first reason is the run's). */
  stopAll(reason: string): void {
    if (this.abortReason === null) this.abortReason = reason;
    // A reconnecting agent hears it when it rejoins (rejoin says it again).
    for (const s of this.states) if (!s.final && !s.lost) s.stop(reason);
    this.wake();
  }

  /** An in-run clock probe answered: kept for the drift fit, and the agent steered. */
  probed(s: AgentChannel, p: ProbeSample): void {
    s.runProbes.push(p);
    this.steer(s);
  }

  /**
   * Keeps a drifting agent on our timeline (clock-slew.ts): once the load is under way, each new
   * probe refits its drift and the agent is told the rate to slew at. Agents of an explicit common
   * clock domain are not steered: their clocks are disciplined by the domain's sync (chrony, PTP),
   * finer than our probes can measure, and steering them onto ours would also carry our own drift
   * into a domain we may not be in. Their declaration is checked instead, each second (checkDomain).
   */
  private steer(s: AgentState): void {
    s.offsetLine = fitOffsetLine(s.runProbes);
    if (s.firstSendErrorNs === null || s.channel.done) return;
    if (this.decision?.alignment === 'explicit-common-clock-domain') {
      this.checkDomain(s);
      return;
    }
    // An agent of our own host and boot reads our clock through our anchor: its offset is zero by
    // construction, and steering it would only feed it the probes' noise (seen: 1–5 ms early on).
    if (s.conn.hello.clock_domain_id === hostClockDomain()) return;
    const step = slewStep(s.runProbes, s.offset.offset_ns, this.clock.nowNs(), s.clockCorrectionNs ?? 0);
    if (!step) return;
    s.conn.send({ type: 'slew', rate_ppm: step.ratePpm });
    s.slewSteps.push({ t_s: this.elapsedS(), drift_ppm: step.driftPpm, error_ns: step.errorNs });
  }

  /**
   * An agent of a declared common clock domain: how far it sits from the domain's reference now
   * (clock-policy.ts), for the clock_residual check, so a declaration that stops holding during the
   * run is caught rather than trusted. The coordinator's own host domain reads one clock.
   */
  private checkDomain(s: AgentState): void {
    if (this.decision!.domainId === hostClockDomain() || !s.offsetLine) return;
    const residual = domainResidualNs(
      this.states.map((x) => (x.lost ? null : x.offsetLine)),
      s.index,
      this.clock.nowNs(),
    );
    if (residual !== null) s.domainSteps.push({ t_s: this.elapsedS(), drift_ppm: s.offsetLine.slope * 1e6, error_ns: residual });
  }
}
