// One run, end to end (the I/O side; planning and summarising are pure modules): resolve the
// target, gather agents, measure their clocks, hand out shares, start them together, collect
// everything they send, and write the run directory — also when the run ends early.
import { randomBytes } from 'node:crypto';
import { mkdir, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock, OffsetEstimate, ProbeSample } from '../shared/clock.js';
import { anchoredClock, hostClockDomain } from '../shared/clock.js';
import { ErrorCode, ExitCode, formatError, LoadfleetError } from '../shared/errors.js';
import type { Plan } from '../shared/plan.js';
import type { AgentHealth, AgentMessage } from '../shared/protocol.js';
import { buildSchedule } from '../shared/schedule.js';
import type { AgentTimebase } from './artifacts/requests-ndjson.js';
import { writeRunJson } from './artifacts/run-json.js';
import { ARM_MARGIN_NS, armAll, chooseStartNs } from './barrier.js';
import type { ClockDecision, OnClockMismatch } from './clock-policy.js';
import { decideAlignment } from './clock-policy.js';
import { Collector } from './collector.js';
import type { MetricsEndpoint } from './live/metrics-server.js';
import { LiveMonitor } from './live/monitor.js';
import { serverSource } from './live/server-sample.js';
import type { LocalAgent, LocalSim } from './local.js';
import { spawnLocalAgents, startLocalSim } from './local.js';
import { planAsRun, shareFor } from './plan.js';
import { probeAll, probeOnce } from './probe.js';
import { writeRunReport } from './report/index.js';
import { EPP_POOL_SATURATION, VLLM_RUNNING, VLLM_WAITING } from './scrape/names.js';
import { Scraper } from './scrape/scraper.js';
import { scrapeTargets } from './scrape/targets.js';
import type { AgentConn } from './server.js';
import { AgentServer } from './server.js';

/** What `coordinator start` was asked to do. */
export interface RunOptions {
  plan: Plan;
  agents: number;
  outDir: string;
  listenHost: string;
  listenPort: number;
  token: string;
  spawnLocal: boolean;
  joinTimeoutMs: number;
  simArgs: readonly string[];
  agentArgs: readonly string[];
  clockToleranceNs: number;
  onClockMismatch: OnClockMismatch;
  maxStartSkewNs: number;
  maxAgentLoss: number;
  tls?: { cert: Buffer; key: Buffer };
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
}

/** Per-agent state during a run. */
export interface AgentState {
  conn: AgentConn;
  offset: OffsetEstimate;
  startLocalNs: bigint;
  prepMs: number;
  firstSendErrorNs: number | null;
  health: AgentHealth | null;
  final: boolean;
  lost: boolean;
  failure: string | null;
  /** Probes taken during the run (one per second), for the drift fit. */
  runProbes: ProbeSample[];
  /** Records a restarted process of a lost agent handed over from its spool. */
  recoveredRecords: number;
  lastHeardMs: number;
}

/** The outcome the CLI reports. */
export interface RunResult {
  dir: string;
  status: 'completed' | 'degraded' | 'aborted';
  summaryLines: string[];
}

const PREPARE_TIMEOUT_MS = 30_000;
const FINAL_GRACE_MS = 30_000;
/** An agent silent this long during a run is lost (heartbeats come every second). */
const AGENT_SILENCE_MS = 5000;

/** Makes a run id like 20261202T134501Z-default-7f3a. */
export function newRunId(planName: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${planName}-${randomBytes(2).toString('hex')}`;
}

/** Executes one run; always writes the run directory once agents have been given the plan. */
export async function executeRun(opts: RunOptions): Promise<RunResult> {
  const runId = newRunId(opts.plan.name);
  const dir = join(opts.outDir, runId);
  await mkdir(dir, { recursive: true });
  const clock = anchoredClock();
  const cleanups: (() => Promise<void>)[] = [];
  try {
    let sim: LocalSim | undefined;
    if (!opts.plan.target) {
      sim = await startLocalSim(opts.simArgs, opts.log);
      cleanups.push(() => sim!.stop());
      opts.log(`engine-sim listening at ${sim.baseUrl}`);
    }
    const plan = planAsRun(opts.plan, sim);
    const server = new AgentServer({
      host: opts.listenHost,
      port: opts.listenPort,
      token: opts.token,
      expectedAgents: opts.agents,
      log: opts.log,
      ...(opts.tls ? { tls: opts.tls } : {}),
    });
    const port = await server.listen();
    cleanups.unshift(() => server.close());
    const url = `${opts.tls ? 'wss' : 'ws'}://${opts.listenHost.includes(':') ? `[${opts.listenHost}]` : opts.listenHost}:${port}`;
    opts.log(`waiting for ${opts.agents} agent(s) at ${url}`);
    let local: LocalAgent[] = [];
    if (opts.spawnLocal) {
      // Local agents are this run's alone, so they spool under the run's id: the ids agent-1… repeat
      // in every run, and another run's spool must never look like theirs (a --agent-arg wins).
      const spoolDir = join(tmpdir(), 'loadfleet-spool', runId);
      local = spawnLocalAgents(
        opts.agents,
        url.replace('0.0.0.0', '127.0.0.1'),
        opts.token,
        [`--spool-dir=${spoolDir}`, ...opts.agentArgs],
        opts.log,
      );
      cleanups.push(async () => {
        await Promise.race([Promise.all(local.map((a) => a.exited)), new Promise((r) => setTimeout(r, 5000))]);
        await Promise.all(local.map((a) => a.stop()));
        // Only an empty directory goes: a spool left by an agent that died mid-run is kept.
        await rmdir(spoolDir).catch(() => {});
      });
    }
    await server.waitForAgents(opts.joinTimeoutMs).catch((err: Error) => {
      throw new LoadfleetError(ErrorCode.JOIN_TIMEOUT, `${err.message}; start agents with: agent --coordinator ${url} --token …`, {
        exitCode: ExitCode.ABORTED,
      });
    });
    const scraper = new Scraper(scrapeTargets(opts.plan, sim), dir, clock);
    cleanups.unshift(() => scraper.close());
    const session = new RunSession(opts, plan, runId, dir, clock, server.agents, scraper);
    server.onResume = (conn) => session.resume(conn);
    return await session.run();
  } finally {
    for (const c of cleanups) await c().catch(() => {});
  }
}

// The part of a run after every agent has joined.
class RunSession {
  private readonly states: AgentState[] = [];
  private readonly schedule;
  private collector: Collector | undefined;
  private startNs = 0n;
  private abortReason: string | null = null;
  private readonly degradeReasons: string[] = [];
  private decision: ClockDecision | undefined;
  private wake: () => void = () => {};

  constructor(
    private readonly opts: RunOptions,
    private readonly plan: Plan,
    private readonly runId: string,
    private readonly dir: string,
    private readonly clock: Clock,
    private readonly agents: readonly AgentConn[],
    private readonly scraper: Scraper,
  ) {
    this.schedule = buildSchedule(plan);
  }

  async run(): Promise<RunResult> {
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
      });
    const offsets = await probeAll(this.agents, this.clock);
    const decision = decideAlignment(
      this.agents.map((a, i) => ({ agentId: a.hello.agent_id, domain: a.hello.clock_domain_id, offset: offsets[i]! })),
      hostClockDomain(),
      opts.clockToleranceNs,
      opts.onClockMismatch,
    );
    this.decision = decision;
    if (decision.note) this.degradeReasons.push(decision.note);
    const explicit = decision.alignment === 'explicit-common-clock-domain';
    const prepMs = await this.prepareAll();
    this.agents.forEach((conn, i) => {
      this.states.push({
        conn,
        offset: offsets[i]!,
        startLocalNs: 0n,
        prepMs: prepMs[i]!,
        firstSendErrorNs: null,
        health: null,
        final: false,
        lost: false,
        failure: null,
        runProbes: [],
        recoveredRecords: 0,
        lastHeardMs: Date.now(),
      });
    });
    const worstRtt = Math.max(...offsets.map((o) => o.rtt_ns));
    this.startNs = chooseStartNs(this.clock.nowNs(), worstRtt, Math.max(...prepMs));
    // Each agent hears the start instant in its own clock: the common domain's, or its measured one.
    for (const s of this.states) s.startLocalNs = this.startNs + BigInt(explicit ? decision.domainOffsetNs : s.offset.offset_ns);
    this.scraper.setRunStart(this.startNs, this.runStartNs() - this.startNs);
    const timebases: AgentTimebase[] = this.states.map((s) => ({
      agentId: s.conn.hello.agent_id,
      startLocalNs: s.startLocalNs,
      alignNs: explicit ? 0n : BigInt(s.offset.offset_ns),
    }));
    const live = new LiveMonitor(
      this.plan,
      this.schedule,
      this.runId,
      {
        progress: opts.progress,
        block: opts.liveBlock,
        metrics: opts.metrics,
        server: serverSource(() => this.scraper.results(), {
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
    this.collector = new Collector(this.plan, this.schedule, timebases, this.dir, this.runStartNs(), () => this.liveIndices(), live.state);
    for (const s of this.states) this.wire(s);
    const onSigint = (): void => this.stopAll('interrupted by the user (SIGINT)');
    process.on('SIGINT', onSigint);
    const ticker = setInterval(() => this.everySecond(), 1000);
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
      opts.log(`all ${this.agents.length} agents armed; start in ${Number(this.startNs - this.clock.nowNs()) / 1e6} ms`);
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

  /** The start instant in the run's clock domain. */
  private runStartNs(): bigint {
    return this.startNs + BigInt(this.decision?.alignment === 'explicit-common-clock-domain' ? this.decision.domainOffsetNs : 0);
  }

  // Once a second: a clock probe to every live agent (for the drift fit) and the silence watchdog.
  private everySecond(): void {
    const now = Date.now();
    for (const s of this.states) {
      if (s.final || s.lost) continue;
      if (now - s.lastHeardMs > AGENT_SILENCE_MS) {
        this.agentLost(s, `silent for ${((now - s.lastHeardMs) / 1000).toFixed(1)} s`);
        continue;
      }
      probeOnce(s.conn, this.clock, 1_000_000 + s.runProbes.length).then(
        (p) => void s.runProbes.push(p),
        () => {},
      );
    }
  }

  /**
   * A restarted process of a lost agent offers its spool: take its records (the collector keeps
   * each request once) and its rebuilt run histograms. It sends no load.
   */
  resume(conn: AgentConn): void {
    const s = this.states.find((x) => x.conn.hello.agent_id === conn.hello.agent_id);
    if (conn.hello.resume_run_id !== this.runId || !s || !s.lost || !this.collector) {
      conn.close(`run ${conn.hello.resume_run_id} is not this run, or ${conn.hello.agent_id} is not a lost agent of it`, 4404);
      return;
    }
    const c = this.collector;
    conn.onMessage((m) => {
      if (m.type === 'records') {
        s.recoveredRecords += c.records(s.conn.index, m.rows);
        conn.send({ type: 'ack', seq: m.seq });
      } else if (m.type === 'final') {
        c.final(m.windows);
        this.opts.log(`agent ${conn.hello.agent_id} handed over ${s.recoveredRecords} spooled requests`);
        this.degradeReasons.push(`agent ${conn.hello.agent_id} handed over ${s.recoveredRecords} spooled requests after it was lost`);
        conn.close('spool received');
      }
    });
    conn.send({ type: 'resume', run_id: this.runId });
  }

  private agentLost(s: AgentState, why: string): void {
    if (s.lost || s.final) return;
    s.lost = true;
    s.conn.close('lost');
    const lost = this.states.filter((x) => x.lost).length;
    const id = s.conn.hello.agent_id;
    this.opts.log(`agent ${id} was lost (${why})`);
    if (lost > this.opts.maxAgentLoss) {
      this.stopAll(`agent ${id} was lost (${why}); ${lost} lost > --max-agent-loss ${this.opts.maxAgentLoss}`);
    } else {
      this.degradeReasons.push(`agent ${id} was lost (${why}); within --max-agent-loss ${this.opts.maxAgentLoss}, the others ran on`);
      this.wake();
    }
  }

  private liveIndices(): number[] {
    return this.states.filter((s) => !s.lost && !s.final).map((s) => s.conn.index);
  }

  // Sends each agent the plan and its share; resolves with their preparation times.
  private prepareAll(): Promise<number[]> {
    return Promise.all(
      this.agents.map(
        (a) =>
          new Promise<number>((resolve, reject) => {
            const timer = setTimeout(
              () =>
                reject(
                  new LoadfleetError(
                    ErrorCode.ARM_TIMEOUT,
                    `agent ${a.hello.agent_id} did not prepare within ${PREPARE_TIMEOUT_MS / 1000} s`,
                    { exitCode: ExitCode.ABORTED },
                  ),
                ),
              PREPARE_TIMEOUT_MS,
            );
            const off = a.onMessage((m) => {
              if (m.type === 'prepared' || m.type === 'failed') {
                clearTimeout(timer);
                off();
                if (m.type === 'prepared') resolve(m.prep_ms);
                else
                  reject(
                    new LoadfleetError(ErrorCode.AGENT_FAILED, `agent ${a.hello.agent_id} could not prepare: ${m.message}`, {
                      exitCode: ExitCode.ABORTED,
                    }),
                  );
              }
            });
            a.send({ type: 'plan', run_id: this.runId, plan: this.plan, share: shareFor(a.index, this.agents.length) });
          }),
      ),
    );
  }

  private wire(s: AgentState): void {
    const c = this.collector!;
    s.conn.onMessage((m: AgentMessage) => {
      s.lastHeardMs = Date.now();
      switch (m.type) {
        case 'records':
          c.records(s.conn.index, m.rows);
          s.conn.send({ type: 'ack', seq: m.seq });
          return;
        case 'interval':
          c.interval(s.conn.index, m.second, m.classes);
          return;
        case 'started':
          s.firstSendErrorNs = m.first_send_error_ns;
          return;
        case 'heartbeat':
          s.health = m.health;
          return;
        case 'final':
          c.final(m.windows);
          s.health = m.health;
          s.final = true;
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
    });
    s.conn.onClose(() => this.agentLost(s, 'connection closed before its results'));
  }

  private stopAll(reason: string): void {
    if (this.abortReason === null) this.abortReason = reason;
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
    const c = this.collector!;
    await c.close();
    await this.scraper.stop();
    await this.scraper.snapshot('post');
    await this.scraper.close();
    const starts = this.states.map((s) => s.firstSendErrorNs).filter((x): x is number => x !== null);
    const skewNs = starts.length > 0 ? Math.max(...starts) - Math.min(...starts) : 0;
    if (skewNs > this.opts.maxStartSkewNs) {
      this.degradeReasons.push(`start skew ${(skewNs / 1e6).toFixed(3)} ms > --max-start-skew-ms ${this.opts.maxStartSkewNs / 1e6}`);
    }
    const startNs = this.runStartNs();
    const finishedNs = startNs + BigInt(Math.round(c.lastDoneNs));
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
      degradeReasons: this.degradeReasons,
      scrapes: this.scraper.results(),
      ...(this.opts.expectFlowControlEngaged === undefined ? {} : { expectFlowControlEngaged: this.opts.expectFlowControlEngaged }),
      ...(this.opts.experiment && { experiment: this.opts.experiment }),
    });
    // The report is a view of the artifacts just written: its failure must never cost the run.
    await writeRunReport(this.dir).catch((err: unknown) => this.opts.log(`report.html not written: ${formatError(err)}`));
    return { dir: this.dir, status: written.status, summaryLines: written.summaryLines };
  }
}
