// The part of a run after its agents are known, start to end: its channels are opened, the
// agents made ready (start.ts), the collector and the live view set up, the agents armed, the
// finals awaited while the watchdog ticks, and the run directory written (write.ts). The fleet
// routes an agent coming back to it (resume.ts).

import { EPP_POOL_SATURATION, VLLM_RUNNING, VLLM_WAITING } from '../../figures/server/names.js';
import type { Clock } from '../../shared/clock.js';
import { formatDuration } from '../../shared/format.js';
import type { RequestRecord } from '../../shared/metrics.js';
import type { Plan } from '../../shared/plan.js';
import { AbortWatch } from '../abort-rule.js';
import type { AgentProgress } from '../artifacts/failed-run-json.js';
import { ARM_MARGIN_NS, armAll } from '../barrier.js';
import type { ChannelHooks } from '../channel.js';
import { AgentChannel } from '../channel.js';
import { Collector } from '../collector.js';
import type { AgentTimebase } from '../file-writers/requests-ndjson.js';
import type { HandedOver, RunHandle } from '../fleet.js';
import type { HeadroomReport } from '../headroom/index.js';
import { LiveMonitor } from '../live/monitor.js';
import { serverSource } from '../live/server-sample.js';
import type { Scraper } from '../scrape/scraper.js';
import type { AgentConn } from '../server.js';
import { onStopSignal, stopHeard, stopReason } from '../stop-signals.js';
import { RunState } from './context.js';
import { onAgentMessage } from './dispatch.js';
import { durabilityHooks, openJournal, waitForUploads } from './durable.js';
import { linkDown } from './losses.js';
import type { RunOnFleetOptions, RunResult } from './options.js';
import { resume } from './resume.js';
import { chooseStart, prepareAgents, progress } from './start.js';
import { EVERY_SECOND_MS, Watchdog } from './watchdog.js';
import { writeAndSummarize } from './write.js';

const FINAL_GRACE_MS = 30_000;

/** One run on the fleet's agents, from the welcome to the written directory. */
export class RunSession extends RunState implements RunHandle {
  /** Every agent is prepared: from here a stop is told to them. */
  private prepared = false;

  constructor(
    opts: RunOnFleetOptions,
    plan: Plan,
    runId: string,
    dir: string,
    clock: Clock,
    agents: readonly AgentConn[],
    lossBudget: number,
    scraper: Scraper,
    headroom: HeadroomReport | null = null,
  ) {
    super(opts, plan, runId, dir, clock, agents, lossBudget, scraper, headroom);
  }

  async run(): Promise<RunResult> {
    this.channels = this.agents.map((a) => new AgentChannel(a, a.index, this.channelHooks()));
    try {
      return await this.runChannels();
    } finally {
      this.moveRun('closing');
      this.moveRun('closed');
      for (const ch of this.channels) ch.dispose();
      await this.journal?.close();
    }
  }

  /** What the run hears from each channel. */
  protected channelHooks(): ChannelHooks {
    return {
      // Before every agent is prepared, the step that waits on the link hears it close.
      linkClosed: (ch) => this.states.includes(ch) && linkDown(this, ch, 'connection closed before its results'),
      illegal: (ch, err) => this.opts.log(`agent ${ch.id}: message dropped (${err.code}: ${err.message})`),
      ...durabilityHooks(this),
    };
  }

  /** The agents whose `final` this run merged, with the mark that acknowledges it (for the fleet, after the run). */
  handedOver(): HandedOver[] {
    return this.states.filter((s) => s.final).map((s) => ({ agentId: s.id, epoch: s.epoch, hwm: s.hwm }));
  }

  resume(conn: AgentConn): boolean {
    return resume(this, conn);
  }

  /** Each agent's last phase before the start, for a failed run's evidence. */
  progress(): AgentProgress[] {
    return progress(this);
  }

  private async runChannels(): Promise<RunResult> {
    // A stop signal (SIGTERM or SIGINT) from here on ends this run: before the start it is aborted
    // with nothing sent, after it the agents are told to stop and hand over; either way the run
    // directory is written, status aborted, its reason naming the signal.
    // Before every agent is prepared a `stop` has no move in their phases: the reason is kept, and
    // the run is aborted as soon as preparing ends.
    const offStop = onStopSignal((signal) => {
      if (this.prepared) this.stopAll(stopReason(signal));
      else this.abortReason ??= stopReason(signal);
    }, 'run');
    // A signal heard while the run was being set up (its target started, its agents taken): no load is sent.
    const heard = stopHeard();
    if (heard) this.abortReason ??= stopReason(heard);
    try {
      return await this.runStopping();
    } finally {
      offStop();
    }
  }

  private async runStopping(): Promise<RunResult> {
    const { opts } = this;
    await this.scraper.snapshot('pre');
    const decision = await prepareAgents(this);
    this.prepared = true;
    chooseStart(this, decision);
    // Durable before any load: from here on every acknowledgement means on disk.
    if (!decision.refusal) await openJournal(this);
    this.scraper.setRunStart(this.startNs, this.runStartNs() - this.startNs);
    const live = this.collect();
    for (const s of this.states) s.onMessage((m) => onAgentMessage(this, s, m));
    const watchdog = new Watchdog(this);
    const ticker = setInterval(() => watchdog.tick(), EVERY_SECOND_MS);
    try {
      const refusal = decision.refusal ?? this.abortReason;
      if (refusal) {
        for (const a of this.agents) a.send({ type: 'abort', reason: refusal });
        this.abortReason = `aborted before any load was sent: ${refusal}`;
        return await writeAndSummarize(this);
      }
      const armDeadlineMs = Number(this.startNs - ARM_MARGIN_NS - this.clock.nowNs()) / 1e6;
      try {
        await armAll(this.states, armDeadlineMs);
      } catch (err) {
        for (const a of this.agents) a.send({ type: 'abort', reason: (err as Error).message });
        this.abortReason = `aborted before any load was sent: ${(err as Error).message}`;
        return await writeAndSummarize(this);
      }
      // A stop that came while arming: the agents told before their arm heard it in a phase that ignores it.
      if (this.abortReason !== null) this.stopAll(this.abortReason);
      opts.log(`all ${this.agents.length} agents armed; start in ${formatDuration(Number(this.startNs - this.clock.nowNs()) / 1e6)}`);
      live.start();
      this.scraper.start(this.startNs);
      await this.waitForFinals();
      await waitForUploads(this);
      if (this.fault) throw this.fault;
      return await writeAndSummarize(this);
    } finally {
      clearInterval(ticker);
      live.stop();
    }
  }

  // The collector (fed by the dispatch) and the live view, with the abort rules listening.
  protected collect(): LiveMonitor {
    const { opts } = this;
    const explicit = this.decision!.alignment === 'explicit-common-clock-domain';
    const timebases: AgentTimebase[] = this.states.map((s) => ({
      agentId: s.id,
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
        agents: () => this.states.map((s) => ({ id: s.id, lost: s.lost, final: s.final, health: s.health })),
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
    return live;
  }

  /** Waits for every agent's final (or loss) until the run's deadline, and at least `minMs` (a recovery waits for reconnects). */
  protected async waitForFinals(minMs = 0): Promise<void> {
    const limitMs = Math.max(
      minMs,
      Number(this.startNs - this.clock.nowNs()) / 1e6 + (this.plan.duration_s + (this.plan.drain_timeout_s ?? 0)) * 1000 + FINAL_GRACE_MS,
    );
    const deadline = Date.now() + limitMs;
    while (this.states.some((s) => !s.final && !s.lost)) {
      if (this.fault) throw this.fault;
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
}
