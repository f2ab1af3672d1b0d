// One run, end to end (the I/O side; planning and summarising are pure modules): resolve the
// target, take the fleet's agents, measure their clocks, hand out shares, start them together,
// collect everything they send (holding an agent whose link was cut as reconnecting for a grace
// period), and write the run directory — also when the run ends early.

import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunPhase } from '../shared/channel.js';
import { runMayMove, SILENCE_DETECTION_BOUND_MS } from '../shared/channel.js';
import type { Clock } from '../shared/clock.js';
import { hostClockDomain } from '../shared/clock.js';
import { ErrorCode, ExitCode, formatError, LoadfleetError } from '../shared/errors.js';
import { formatDuration } from '../shared/format.js';
import { StallClock } from '../shared/late-tick.js';
import type { RequestRecord } from '../shared/metrics.js';
import type { Plan } from '../shared/plan.js';
import type { AgentMessage } from '../shared/protocol.js';
import { CLOSE_CODE } from '../shared/protocol.js';
import { buildSchedule } from '../shared/schedule.js';
import { attachWorkloadInputs } from '../shared/workload-files.js';
import { AbortWatch } from './abort-rule.js';
import type { AgentState } from './agent-state.js';
import { writeBenchmarkReports } from './artifacts/benchmark-report-write.js';
import type { AgentProgress } from './artifacts/failed-run-json.js';
import { writeFailedRunJson } from './artifacts/failed-run-json.js';
import type { AgentTimebase } from './artifacts/requests-ndjson.js';
import { writeRunJson } from './artifacts/run-json.js';
import { ARM_MARGIN_NS, armAll, chooseStartNs } from './barrier.js';
import type { CacheReset } from './cache-reset.js';
import { resetServerCache } from './cache-reset.js';
import { calibratePlan } from './calibrate/index.js';
import { AgentChannel } from './channel.js';
import { ClockSteering } from './clock/steering.js';
import type { ClockDecision, OnClockMismatch } from './clock-policy.js';
import { decideAlignment } from './clock-policy.js';
import { Collector } from './collector.js';
import type { FleetOptions, HandedOver, RunHandle } from './fleet.js';
import { Fleet } from './fleet.js';
import type { HeadroomOptions, HeadroomReport } from './headroom/index.js';
import { checkHeadroom, freeCoresNow } from './headroom/index.js';
import type { MetricsEndpoint } from './live/metrics-server.js';
import { LiveMonitor } from './live/monitor.js';
import { serverSource } from './live/server-sample.js';
import type { LocalSim } from './local.js';
import { startLocalSim } from './local.js';
import type { LocalLayout } from './local-layout.js';
import { embeddedSimArgs, planAsRun, shareFor } from './plan.js';
import { probeAll } from './probe.js';
import { writeRunReport } from './report/index.js';
import type { RunStatus } from './run-status.js';
import { agentLoss } from './run-status.js';
import { EPP_POOL_SATURATION, VLLM_RUNNING, VLLM_WAITING } from './scrape/names.js';
import { Scraper } from './scrape/scraper.js';
import { scrapeTargets } from './scrape/targets.js';
import type { AgentConn } from './server.js';

/** What one run on a fleet needs besides the fleet. */
export interface RunOnFleetOptions {
  plan: Plan;
  outDir: string;
  simArgs: readonly string[];
  clockToleranceNs: number;
  onClockMismatch: OnClockMismatch;
  maxStartSkewNs: number;
  maxAgentLoss: number;
  /** How long an agent whose link was cut mid-run is held as reconnecting before it is lost (0: at once). */
  agentGraceMs: number;
  /** Set when the run is one of an experiment's; written into run.json as `experiment`. */
  experiment?: { name: string; arm: string; repeat: number };
  /** Whether the gateway's flow control should engage in this run (an experiment arm's expectation); slo_proof checks it only when set. */
  expectFlowControlEngaged?: boolean;
  log(line: string): void;
  progress(line: string): void;
  /** When set (stderr is a terminal), the live view is this block redrawn each second instead of progress lines. */
  liveBlock?: ((lines: string[]) => void) | undefined;
  /** Serves the run's live client-side figures at /metrics while it goes. */
  metrics?: MetricsEndpoint | undefined;
  /** The headroom check before any request (coordinator/headroom); absent: not checked. */
  headroom?: HeadroomOptions;
}

/** What `coordinator start` was asked to do: one run on a fleet of its own. */
export type RunOptions = RunOnFleetOptions & FleetOptions;

/** The outcome the CLI reports. */
export interface RunResult {
  dir: string;
  status: RunStatus;
  summaryLines: string[];
}

const PREPARE_TIMEOUT_MS = 30_000;
/**
 * In-run clock probes a second at most: agents beyond this many are probed in turns (10,000 agents:
 * each every 10 s), so a large fleet's probes cost the coordinator no more than 1,000 agents' do;
 * the drift fit and the steering of each agent get fewer points (run.json agents[].run_probes).
 */
const IN_RUN_PROBES_PER_S = 1000;
const FINAL_GRACE_MS = 30_000;
/** An agent silent this long during a run is lost (heartbeats come every second). */
const AGENT_SILENCE_MS = 5000;
/** The period of the in-run watchdog (everySecond). */
const EVERY_SECOND_MS = 1000;

/** Makes a run id like 20261202T134501Z-default-7f3a. */
export function newRunId(planName: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${planName}-${randomBytes(2).toString('hex')}`;
}

/** The cause that marks an LF_AGENT_LOST thrown before any load was sent (the run can be retried). */
const BEFORE_START = 'before-start';
/** How often a run is retried when an agent leaves before its start. */
const START_ATTEMPTS = 3;

/** Executes one run on a fleet of its own (`coordinator start`), released at the end. */
export async function executeRun(opts: RunOptions): Promise<RunResult> {
  return withFleet(opts, 'the run is over', (fleet) => runOnFleet(fleet, opts));
}

/** Opens a fleet, waits for its N agents, runs `body` on it and releases it whatever happens. */
export async function withFleet<T>(opts: FleetOptions, releaseReason: string, body: (fleet: Fleet) => Promise<T>): Promise<T> {
  const fleet = await Fleet.open(opts);
  try {
    await fleet.waitForAgents();
    return await body(fleet);
  } finally {
    await fleet.release(releaseReason);
  }
}

/**
 * Executes one run on the fleet's agents; always writes the run directory once agents have been
 * given the plan. Throws LF_FLEET_SHORT (before any directory exists) when too many are gone.
 */
export async function runOnFleet(fleet: Fleet, opts: RunOnFleetOptions): Promise<RunResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runAttempt(fleet, opts);
    } catch (err) {
      const retry = err instanceof LoadfleetError && err.code === ErrorCode.AGENT_LOST && err.cause === BEFORE_START;
      if (!retry || attempt >= START_ATTEMPTS) throw err;
      opts.log(`${err.message}; nothing was sent, so the run starts again with the fleet's agents`);
    }
  }
}

async function runAttempt(fleet: Fleet, opts: RunOnFleetOptions): Promise<RunResult> {
  const { agents, lossBudget } = await fleet.agentsForRun();
  // Trace and dataset files are read (and checked: exit 2 with their line numbers) before anything exists.
  const planWithInputs = await attachWorkloadInputs(opts.plan);
  // Each share against its agent's measured limits, before anything is sent (or any directory made).
  const headroom = opts.headroom
    ? checkHeadroom(
        planWithInputs,
        buildSchedule(planWithInputs),
        agents.map((a) => ({ id: a.hello.agent_id, selfTest: a.hello.self_test, workers: a.hello.workers ?? 1 })),
        opts.headroom,
        opts.log,
        fleet.opts.spawnLocal
          ? { freeCores: opts.headroom.freeCores ?? freeCoresNow(), ...(fleet.localLayout && { groups: fleet.localLayout.groups }) }
          : undefined,
      )
    : null;
  const runId = newRunId(opts.plan.name);
  const dir = join(opts.outDir, runId);
  await mkdir(dir, { recursive: true });
  const cleanups: (() => Promise<void>)[] = [];
  const startedAt = new Date();
  let plan = opts.plan;
  let session: RunSession | undefined;
  try {
    let sim: LocalSim | undefined;
    if (!opts.plan.target) {
      sim = await startLocalSim(embeddedSimArgs(opts.plan, opts.simArgs), opts.log);
      cleanups.push(() => sim!.stop());
      opts.log(`engine-sim listening at ${sim.baseUrl}`);
    }
    plan = await calibratePlan(planAsRun(planWithInputs, sim), runId, opts.log);
    // Last before the load (calibration's tokenize calls cache nothing): a clean cache if asked.
    const cacheReset = await resetServerCache(opts.plan.target, opts.log);
    const scraper = new Scraper(scrapeTargets(opts.plan, sim), dir, fleet.clock, { plan });
    cleanups.unshift(() => scraper.close());
    session = new RunSession(opts, plan, runId, dir, fleet.clock, agents, lossBudget, scraper, headroom);
    session.cacheReset = cacheReset;
    session.localLayout = fleet.localLayout;
    fleet.setRun(session);
    cleanups.unshift(async () => fleet.setRun(null));
    return await session.run();
  } catch (err) {
    // A run that never started leaves no directory behind: its retry is the run.
    if (err instanceof LoadfleetError && err.cause === BEFORE_START) cleanups.push(() => rm(dir, { recursive: true, force: true }));
    // Any other failure before the run directory was written keeps its evidence there.
    else if (!session?.wroteRunJson) {
      const progress =
        session?.progress() ?? agents.map((a) => ({ agent_id: a.hello.agent_id, host: a.hello.host, state: 'joined', detail: null }));
      await writeFailedRunJson({ dir, runId, plan, startedAt, error: err, agents: progress }).catch(() => {});
    }
    throw err;
  } finally {
    for (const c of cleanups) await c().catch(() => {});
  }
}

// The part of a run after its agents are known.
class RunSession implements RunHandle {
  private readonly states: AgentState[] = [];
  /** One channel per agent, from the welcome to the run's end (it owns every subscription on the link). */
  private channels: AgentChannel[] = [];
  private phase: RunPhase = 'open';
  private probeSeq = 0;
  /** Seconds ticked (everySecond), for the probe turns of a large fleet. */
  private ticks = 0;
  /** In-run clock probes that got no answer in time (counted, not silently dropped). */
  probeFailures = 0;
  private readonly schedule;
  private collector: Collector | undefined;
  /** The plan's abort rules, watched once the load starts (null without rules). */
  private abortWatch: AbortWatch | null = null;
  private startNs = 0n;
  private abortReason: string | null = null;
  /** What was done to the server's cache before the load (cache-reset.ts). */
  cacheReset: CacheReset | undefined;
  /** How the fleet's local agents were laid out in processes (null: not spawned here). */
  localLayout: LocalLayout | null = null;
  private readonly runEvents: string[] = [];
  private decision: ClockDecision | undefined;
  /** The steering of drifting agents' clocks (clock/steering.ts), from the alignment decision on. */
  private steering: ClockSteering | undefined;
  private wake: () => void = () => {};
  /** The watchdog's time base, which does not count this process's own stalls as an agent's silence. */
  private stallClock = new StallClock(EVERY_SECOND_MS);
  /** Where each agent got to before the start, for a failed run's evidence. */
  private readonly reached = new Map<string, { state: string; detail: string | null }>();
  /** True once run.json (any status) is written. */
  wroteRunJson = false;

  constructor(
    private readonly opts: RunOnFleetOptions,
    private readonly plan: Plan,
    readonly runId: string,
    private readonly dir: string,
    private readonly clock: Clock,
    private readonly agents: readonly AgentConn[],
    /** Agents this run may lose before it aborts: --max-agent-loss less those the fleet already lacks. */
    private readonly lossBudget: number,
    private readonly scraper: Scraper,
    private readonly headroom: HeadroomReport | null = null,
  ) {
    this.schedule = buildSchedule(plan);
  }

  async run(): Promise<RunResult> {
    this.channels = this.agents.map((a) => new AgentChannel(a, () => this.onLinkClosed(a.index)));
    try {
      return await this.runChannels();
    } finally {
      this.moveRun('closing');
      this.moveRun('closed');
      for (const ch of this.channels) ch.dispose();
    }
  }

  private moveRun(to: RunPhase): void {
    if (runMayMove(this.phase, to)) this.phase = to;
  }

  /** The agents whose `final` this run merged, with the mark that acknowledges it (for the fleet, after the run). */
  handedOver(): HandedOver[] {
    return this.states.filter((s) => s.final).map((s) => ({ agentId: s.conn.hello.agent_id, epoch: s.channel.epoch, hwm: s.channel.hwm }));
  }

  private async runChannels(): Promise<RunResult> {
    const { opts } = this;
    await this.scraper.snapshot('pre');
    // Agents on this very machine (same boot, so the same monotonic clock) take the coordinator's
    // anchor: one hrtime-to-wall mapping for all of them, so a wall clock being slewed between
    // their start-ups cannot make them disagree by milliseconds.
    const anchor = { wall_ns: this.clock.anchor.wallNs, hr: this.clock.anchor.hr, uncertainty_ns: this.clock.anchor.uncertaintyNs };
    for (const a of this.agents)
      a.send({
        type: 'welcome',
        agent_index: a.index,
        agent_count: this.agents.length,
        run_id: this.runId,
        host_domain: hostClockDomain(),
        anchor,
        grace_ms: opts.agentGraceMs,
      });
    for (const a of this.agents) this.reach(a, 'joined');
    const offsets = await this.beforeStart(() => probeAll(this.agents, this.clock));
    for (const a of this.agents) this.reach(a, 'probed');
    const decision = decideAlignment(
      this.agents.map((a, i) => ({ agentId: a.hello.agent_id, domain: a.hello.clock_domain_id, offset: offsets[i]! })),
      hostClockDomain(),
      opts.clockToleranceNs,
      opts.onClockMismatch,
    );
    this.decision = decision;
    if (decision.note) this.runEvents.push(decision.note);
    const explicit = decision.alignment === 'explicit-common-clock-domain';
    const steering = new ClockSteering(
      this.clock,
      decision,
      () => this.startNs,
      () => this.elapsedS(),
    );
    this.steering = steering;
    // Steered agents are probed while they prepare, so their drift is fitted before the start.
    const preparing = this.prepareAll();
    const preStart = steering.probeBeforeStart(this.agents, preparing);
    const prepMs = await this.beforeStart(() => preparing);
    const preStartProbes = await preStart;
    this.agents.forEach((_conn, i) => {
      const channel = this.channels[i]!;
      this.states.push({
        index: i,
        channel,
        get conn() {
          return channel.conn;
        },
        get reconnecting() {
          return channel.phase === 'reconnecting';
        },
        get final() {
          return channel.phase === 'final';
        },
        get lost() {
          return channel.phase === 'lost';
        },
        outages: [],
        offset: offsets[i]!,
        startLocalNs: 0n,
        prepMs: prepMs[i]!,
        firstSendErrorNs: null,
        health: null,
        terminated: null,
        failure: null,
        runProbes: preStartProbes[i]!,
        clockCorrectionNs: null,
        slewSteps: [],
        offsetLine: null,
        domainSteps: [],
        recoveredRecords: 0,
        spoolHandedOver: false,
        lastHeardMs: Date.now(),
      });
    });
    const worstRtt = Math.max(...offsets.map((o) => o.rtt_ns));
    this.startNs = chooseStartNs(this.clock.nowNs(), worstRtt, Math.max(...prepMs));
    steering.placeStart(this.states, this.startNs);
    // Each agent hears the start instant in its own clock: the common domain's, or its measured one.
    for (const s of this.states) s.startLocalNs = this.startNs + BigInt(explicit ? decision.domainOffsetNs : s.startOffsetNs!);
    this.scraper.setRunStart(this.startNs, this.runStartNs() - this.startNs);
    const timebases: AgentTimebase[] = this.states.map((s) => ({
      agentId: s.conn.hello.agent_id,
      startLocalNs: s.startLocalNs,
      alignNs: explicit ? 0n : BigInt(s.startOffsetNs!),
    }));
    const live = new LiveMonitor(
      this.plan,
      this.schedule,
      this.runId,
      {
        progress: opts.progress,
        block: opts.liveBlock,
        metrics: opts.metrics,
        server: serverSource(() => this.scraper.summary().liveSources(), {
          running: VLLM_RUNNING,
          waiting: VLLM_WAITING,
          saturation: EPP_POOL_SATURATION,
        }),
      },
      {
        elapsedS: () => Number(this.clock.nowNs() - this.startNs) / 1e9,
        agents: () => this.states.map((s) => ({ id: s.conn.hello.agent_id, lost: s.lost, final: s.final, health: s.health })),
      },
    );
    // A reconnecting agent's intervals arrive when it is back: hold seconds open for its grace.
    const latenessS = Math.ceil(opts.agentGraceMs / 1000) + 2;
    if (this.plan.abort) this.abortWatch = new AbortWatch(this.plan.abort, this.plan);
    const watch = this.abortWatch;
    // The abort rules hear each request once, as the live view does (the collector drops resent ones).
    const listener = watch
      ? {
          second: live.state.second.bind(live.state),
          finished: (r: RequestRecord): void => {
            live.state.finished(r);
            watch.add([r]);
          },
        }
      : live.state;
    this.collector = new Collector(
      this.plan,
      this.schedule,
      timebases,
      this.dir,
      this.runStartNs(),
      () => this.liveIndices(),
      listener,
      latenessS,
    );
    for (const s of this.states) this.wire(s);
    const onSigint = (): void => this.stopAll('interrupted by the user (SIGINT)');
    process.on('SIGINT', onSigint);
    this.stallClock = new StallClock(EVERY_SECOND_MS);
    const ticker = setInterval(() => this.everySecond(), EVERY_SECOND_MS);
    try {
      if (decision.refusal) {
        for (const a of this.agents) a.send({ type: 'abort', reason: decision.refusal });
        this.abortReason = `aborted before any load was sent: ${decision.refusal}`;
        return await this.writeAndSummarize();
      }
      const armDeadlineMs = Number(this.startNs - ARM_MARGIN_NS - this.clock.nowNs()) / 1e6;
      try {
        await armAll(this.agents, (a) => this.states[a.index]!.startLocalNs, armDeadlineMs);
      } catch (err) {
        for (const a of this.agents) a.send({ type: 'abort', reason: (err as Error).message });
        this.abortReason = `aborted before any load was sent: ${(err as Error).message}`;
        return await this.writeAndSummarize();
      }
      for (const s of this.states) if (s.channel.phase === 'joined') s.channel.move('armed');
      opts.log(`all ${this.agents.length} agents armed; start in ${formatDuration(Number(this.startNs - this.clock.nowNs()) / 1e6)}`);
      live.start();
      this.scraper.start(this.startNs);
      await this.waitForFinals();
      return await this.writeAndSummarize();
    } finally {
      clearInterval(ticker);
      live.stop();
      process.off('SIGINT', onSigint);
    }
  }

  /**
   * Runs a step before any load: if it fails because an agent's link closed, the others are told
   * to drop the run and LF_AGENT_LOST is thrown with `beforeStart`, so the fleet can run it again
   * with the agents that are there (nothing was sent, nothing is lost).
   */
  private async beforeStart<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (err) {
      // A link that went silent (a probe or the preparation timed out) is dropped by the heartbeat
      // within its bound: wait that long to tell a silent link from an agent that failed.
      const reported = err instanceof LoadfleetError && err.code === ErrorCode.AGENT_FAILED;
      const deadline = reported ? 0 : Date.now() + SILENCE_DETECTION_BOUND_MS;
      while (!this.agents.some((a) => a.closed) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const gone = this.agents.filter((a) => a.closed).map((a) => a.hello.agent_id);
      if (gone.length === 0) throw err;
      const why = `agent ${gone.join(', ')} left before the run started`;
      for (const a of this.agents) a.send({ type: 'abort', reason: why });
      throw new LoadfleetError(ErrorCode.AGENT_LOST, why, { exitCode: ExitCode.ABORTED, cause: BEFORE_START });
    }
  }

  /** Each agent's last state before the start (joined, probed, preparing, prepared, failed). */
  progress(): AgentProgress[] {
    return this.agents.map((a) => ({
      agent_id: a.hello.agent_id,
      host: a.hello.host,
      state: 'joined',
      detail: null,
      ...this.reached.get(a.hello.agent_id),
    }));
  }

  private reach(a: AgentConn, state: string, detail: string | null = null): void {
    this.reached.set(a.hello.agent_id, { state, detail });
  }

  /** Seconds since the start instant on the coordinator's clock. */
  private elapsedS(): number {
    return Math.round(Number(this.clock.nowNs() - this.startNs) / 1e6) / 1e3;
  }

  /** The start instant in the run's clock domain. */
  private runStartNs(): bigint {
    return this.startNs + BigInt(this.decision?.alignment === 'explicit-common-clock-domain' ? this.decision.domainOffsetNs : 0);
  }

  // Once a second: a clock probe to every live agent (for the drift fit), the silence watchdog,
  // and the end of the grace for agents that are reconnecting.
  private everySecond(): void {
    const now = this.stallClock.tick();
    // An abort rule that fired stops the run like any other stop: aborted, every artifact written.
    if (this.abortWatch && this.abortReason === null && this.clock.nowNs() > this.startNs) {
      const why = this.abortWatch.check(Number(this.clock.nowNs() - this.startNs));
      if (why !== null) {
        this.opts.log(why);
        this.stopAll(why);
      }
    }
    // This process's own stalls are no agent's silence (its frames are read after the timers), nor
    // part of a reconnecting agent's grace (its hello may wait unread): late-tick.ts.
    // A large fleet is probed in turns (IN_RUN_PROBES_PER_S a second): each probe is two frames, a
    // timer and a handler on the link, for every agent every second otherwise.
    const turns = Math.max(1, Math.ceil(this.states.length / IN_RUN_PROBES_PER_S));
    const turn = this.ticks++ % turns;
    for (const s of this.states) {
      if (s.final || s.lost) continue;
      if (s.reconnecting) {
        if (this.stallClock.silenceMs(s.lastHeardMs, now) > this.opts.agentGraceMs)
          this.agentLost(s, `cut off for ${((now - s.lastHeardMs) / 1000).toFixed(1)} s, longer than --agent-grace-s`);
        continue;
      }
      if (this.stallClock.silenceMs(s.lastHeardMs, now) > AGENT_SILENCE_MS) {
        this.linkDown(s, `silent for ${((now - s.lastHeardMs) / 1000).toFixed(1)} s`);
        continue;
      }
      if (s.index % turns !== turn) continue;
      // Each probe its own number: a late reply must not complete a later probe.
      this.steering!.probe(s, () => 1_000_000 + this.probeSeq++, this.states).catch(() => void this.probeFailures++);
    }
  }

  /**
   * An agent came back to this run. The same process (its epoch) after a cut link rejoins live:
   * it goes on with its load and resends everything past the channel's mark, which it is told. One
   * whose `final` is already merged is told the mark again (its ack was lost with the link), also
   * while the run is closing. A restarted process of a lost agent hands over its spool in a
   * sequence space of its own (its records and rebuilt run histograms; it sends no load); one that
   * claims the id of an agent whose link is alive is refused. Returns true when the link joins the
   * fleet (a live rejoin, or a hand-over being confirmed).
   */
  resume(conn: AgentConn): boolean {
    const s = this.states.find((x) => x.conn.hello.agent_id === conn.hello.agent_id);
    const refuse = (why: string, code: number = CLOSE_CODE.UNKNOWN_RUN): false => {
      conn.close(why, code);
      return false;
    };
    if (conn.hello.resume_run_id !== this.runId || !s || !this.collector || this.phase === 'closed')
      return refuse(`run ${conn.hello.resume_run_id} is not in progress here`);
    const sameProcess = conn.hello.resume_live === true && conn.hello.epoch === s.channel.epoch;
    if (s.final) {
      if (!sameProcess) return refuse(`${conn.hello.agent_id} has nothing left to give run ${this.runId}`);
      conn.index = s.index;
      s.channel.attach(conn);
      conn.send({ type: 'resume', run_id: this.runId, acked: s.channel.hwm });
      this.opts.log(`agent ${conn.hello.agent_id} came back for the acknowledgement of its final`);
      return true;
    }
    if (this.phase === 'closing') return refuse(`run ${this.runId} is closing`);
    if (sameProcess && !s.lost) return this.rejoin(s, conn);
    if (conn.hello.resume_live) {
      if (!s.lost)
        return refuse(
          `${ErrorCode.DUPLICATE_AGENT}: agent id ${conn.hello.agent_id} is in run ${this.runId} as another process`,
          CLOSE_CODE.DUPLICATE,
        );
      // The same process, back after its grace ran out: it was lost; a restart hands its spool over.
      return refuse(`${conn.hello.agent_id} was lost from run ${this.runId} (its grace ran out)`);
    }
    if (!s.lost && !s.reconnecting && !s.conn.closed)
      return refuse(
        `${ErrorCode.DUPLICATE_AGENT}: agent id ${conn.hello.agent_id} is connected and running; a restarted process may hand over its spool only once that link is gone`,
        CLOSE_CODE.DUPLICATE,
      );
    // A restarted process: whatever ran before it is gone, so the agent is lost (it cannot send
    // load again); what it finished is in the spool it offers.
    if (!s.lost) this.agentLost(s, 'its process restarted');
    s.channel.attach(conn, true);
    conn.send({ type: 'resume', run_id: this.runId, acked: 0 });
    return false;
  }

  // A restarted process hands over its spool on the lost agent's channel (fresh sequence space).
  private onUpload(s: AgentState, m: AgentMessage): void {
    const c = this.collector!;
    if (m.type === 'records') {
      s.recoveredRecords += c.records(s.index, m.rows, true);
    } else if (m.type === 'final' && !s.spoolHandedOver) {
      s.spoolHandedOver = true;
      c.final(s.index, m.windows);
      this.opts.log(`agent ${s.conn.hello.agent_id} handed over ${s.recoveredRecords} spooled requests`);
      this.runEvents.push(`agent ${s.conn.hello.agent_id} handed over ${s.recoveredRecords} spooled requests after it was lost`);
    }
  }

  // The same agent process is back on a new link: carry on where it was.
  private rejoin(s: AgentState, conn: AgentConn): boolean {
    if (!s.reconnecting) this.linkDown(s, 'it reconnected before its old link was seen to fail');
    const outage = s.outages.at(-1)!;
    outage.to_s = this.elapsedS();
    outage.resumed = true;
    const downS = outage.to_s - outage.from_s;
    s.channel.move(s.firstSendErrorNs === null ? 'armed' : 'live');
    s.lastHeardMs = Date.now();
    conn.index = s.index;
    s.channel.attach(conn);
    conn.send({ type: 'resume', run_id: this.runId, acked: s.channel.hwm });
    if (this.abortReason !== null) conn.send({ type: 'stop', reason: this.abortReason });
    this.opts.log(`agent ${conn.hello.agent_id} reconnected after ${downS.toFixed(1)} s and resumed the run`);
    this.runEvents.push(
      `agent ${conn.hello.agent_id} was cut off for ${downS.toFixed(1)} s from t=${outage.from_s.toFixed(1)} s (${outage.reason}); it reconnected and resumed`,
    );
    return true;
  }

  // The agent's link is gone (closed, or silent past the heartbeat timeout): within the grace it
  // is reconnecting — its load goes on and its data waits on its side — after it, lost.
  private linkDown(s: AgentState, why: string): void {
    if (s.channel.done || s.reconnecting) return;
    if (this.opts.agentGraceMs <= 0) {
      this.agentLost(s, why);
      return;
    }
    s.channel.move('reconnecting');
    s.outages.push({ from_s: this.elapsedS(), to_s: null, reason: why, resumed: false });
    s.conn.terminate();
    this.opts.log(
      `agent ${s.conn.hello.agent_id}: link down (${why}); holding it as reconnecting for up to ${this.opts.agentGraceMs / 1000} s`,
    );
  }

  private agentLost(s: AgentState, why: string): void {
    if (s.channel.done) return;
    s.channel.move('lost');
    const outage = s.outages.at(-1);
    if (outage && outage.to_s === null) outage.to_s = this.elapsedS();
    s.conn.close('lost');
    this.countLoss(s, why);
  }

  // A SIGTERMed agent's final is merged like any other; only its share is short.
  private agentTerminated(s: AgentState, why: string): void {
    s.terminated = why;
    this.countLoss(s, why);
  }

  private countLoss(s: AgentState, why: string): void {
    const lost = this.states.filter((x) => x.lost || x.terminated !== null).length;
    const id = s.conn.hello.agent_id;
    this.opts.log(`agent ${id} was lost (${why})`);
    const loss = agentLoss(id, why, lost, this.lossBudget, this.opts.maxAgentLoss);
    if (loss.stop) {
      this.stopAll(loss.reason);
    } else {
      this.runEvents.push(loss.reason);
      this.collector?.agentGone();
      this.wake();
    }
  }

  // Agents whose intervals a second waits for: reconnecting ones too (their data is on its way).
  private liveIndices(): number[] {
    return this.states.filter((s) => !s.lost && !s.final).map((s) => s.index);
  }

  // Sends each agent the plan and its share; resolves with their preparation times.
  private prepareAll(): Promise<number[]> {
    return Promise.all(
      this.agents.map(
        (a) =>
          new Promise<number>((resolve, reject) => {
            const timer = setTimeout(() => {
              this.reach(a, 'failed', `did not prepare within ${PREPARE_TIMEOUT_MS / 1000} s`);
              reject(
                new LoadfleetError(
                  ErrorCode.ARM_TIMEOUT,
                  `agent ${a.hello.agent_id} did not prepare within ${PREPARE_TIMEOUT_MS / 1000} s`,
                  { exitCode: ExitCode.ABORTED },
                ),
              );
            }, PREPARE_TIMEOUT_MS);
            const offClose = a.onClose(() => {
              clearTimeout(timer);
              off();
              this.reach(a, 'failed', 'closed its link while preparing');
              reject(new Error(`agent ${a.hello.agent_id} closed its link while preparing`));
            });
            const off = this.channels[a.index]!.onMessage((m) => {
              if (m.type === 'prepared' || m.type === 'failed') {
                clearTimeout(timer);
                off();
                offClose();
                this.reach(a, m.type === 'prepared' ? 'prepared' : 'failed', m.type === 'failed' ? `${m.code}: ${m.message}` : null);
                if (m.type === 'prepared') resolve(m.prep_ms);
                else {
                  this.channels[a.index]!.move('failed');
                  reject(
                    new LoadfleetError(ErrorCode.AGENT_FAILED, `agent ${a.hello.agent_id} could not prepare: ${m.message}`, {
                      exitCode: ExitCode.ABORTED,
                    }),
                  );
                }
              }
            });
            this.reach(a, 'preparing');
            a.send({ type: 'plan', run_id: this.runId, plan: this.plan, share: shareFor(a.index, this.agents.length) });
          }),
      ),
    );
  }

  // Every message of the run's agents, through their channels (which ack and de-duplicate).
  private wire(s: AgentState): void {
    s.channel.onMessage((m) => this.onAgentMessage(s, m));
  }

  private onLinkClosed(index: number): void {
    const s = this.states[index];
    if (s) this.linkDown(s, 'connection closed before its results');
  }

  private onAgentMessage(s: AgentState, m: AgentMessage): void {
    const c = this.collector!;
    s.lastHeardMs = Date.now();
    if (s.lost) {
      this.onUpload(s, m);
      return;
    }
    switch (m.type) {
      case 'records':
        c.records(s.index, m.rows);
        return;
      case 'interval':
        c.interval(s.index, m.second, m.classes);
        return;
      case 'started':
        s.firstSendErrorNs = m.first_send_error_ns;
        if (s.channel.phase === 'armed') s.channel.move('live');
        this.steering?.started(s, this.states);
        return;
      case 'heartbeat':
        s.health = m.health;
        if (m.clock_correction_ns !== undefined) s.clockCorrectionNs = m.clock_correction_ns;
        return;
      case 'final':
        c.final(s.index, m.windows, m.tally);
        s.health = m.health;
        s.channel.move('final');
        c.agentGone(); // it sends no more intervals: seconds that waited for it close
        // An agent whose process was stopped mid-run (SIGTERM) handed over what it measured but
        // not its whole share: its data stays (its final is acknowledged, so its spool goes), and
        // it counts as lost against --max-agent-loss.
        if (m.terminated !== undefined) this.agentTerminated(s, `${m.terminated}; it handed over its ${m.records} requests`);
        this.wake();
        return;
      case 'failed':
        s.failure = `${m.code}: ${m.message}`;
        this.opts.log(`agent ${s.conn.hello.agent_id} failed: ${s.failure}`);
        this.stopAll(`agent ${s.conn.hello.agent_id} failed: ${m.message}`);
        return;
      default:
        return;
    }
  }

  private stopAll(reason: string): void {
    if (this.abortReason === null) this.abortReason = reason;
    // A reconnecting agent hears it when it rejoins (rejoin sends it again).
    for (const s of this.states) if (!s.final && !s.lost) s.conn.send({ type: 'stop', reason });
    this.wake();
  }

  private async waitForFinals(): Promise<void> {
    const limitMs =
      Number(this.startNs - this.clock.nowNs()) / 1e6 + (this.plan.duration_s + (this.plan.drain_timeout_s ?? 0)) * 1000 + FINAL_GRACE_MS;
    const deadline = Date.now() + limitMs;
    while (this.states.some((s) => !s.final && !s.lost)) {
      if (Date.now() > deadline) {
        this.stopAll('agents did not finish within duration + drain timeout + grace');
        break;
      }
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 500);
      });
    }
  }

  private async writeAndSummarize(): Promise<RunResult> {
    this.moveRun('closing');
    const c = this.collector!;
    await c.close();
    await this.scraper.stop();
    await this.scraper.snapshot('post');
    await this.scraper.close();
    const startNs = this.runStartNs();
    const finishedNs = startNs + BigInt(Math.round(c.lastDoneNs));
    this.wroteRunJson = true;
    const written = await writeRunJson({
      dir: this.dir,
      runId: this.runId,
      plan: this.plan,
      schedule: this.schedule,
      collector: c,
      states: this.states,
      startNs,
      finishedNs: finishedNs > startNs ? finishedNs : this.clock.nowNs(),
      decision: this.decision!,
      coordinatorAnchorUncertaintyNs: this.clock.anchorUncertaintyNs,
      abortReason: this.abortReason,
      runEvents: this.runEvents,
      maxStartSkewNs: this.opts.maxStartSkewNs,
      clockToleranceNs: this.opts.clockToleranceNs,
      scrapes: this.scraper.summary(),
      headroom: this.headroom,
      localLayout: this.localLayout,
      ...(this.cacheReset && { cacheReset: this.cacheReset }),
      ...(this.opts.expectFlowControlEngaged === undefined ? {} : { expectFlowControlEngaged: this.opts.expectFlowControlEngaged }),
      ...(this.opts.experiment && { experiment: this.opts.experiment }),
    });
    // The report is a view of the artifacts just written: its failure must never cost the run.
    await writeRunReport(this.dir).catch((err: unknown) => this.opts.log(`report.html not written: ${formatError(err)}`));
    await writeBenchmarkReports(this.dir).catch((err: unknown) => this.opts.log(`benchmark-report not written: ${formatError(err)}`));
    return { dir: this.dir, status: written.status, summaryLines: written.summaryLines };
  }
}
