// A run taken up again by a restarted coordinator from its journal. The channels are rebuilt from
// the header (each agent's share, epoch, timebase), every durable message is replayed through the
// same collector path as when it arrived (so each record counts once; the high-water marks drop
// what the agents resend), the run's events are replayed (losses, the stop), and every agent not
// yet final is held as reconnecting from the journal's last write: the agents, which keep their
// load going and reconnect within their grace, rejoin and resend what was not durable. Then the run
// ends as any run does: the finals awaited, the directory written, the journal retired.
import type { Clock } from '../../shared/clock.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import { failpoint } from '../../shared/failpoints.js';
import { decodeAgentMessage } from '../../shared/protocol.js';
import { AgentChannel } from '../channel.js';
import { ClockSteering } from '../clock/steering.js';
import type { ReadJournal } from '../journal/reader.js';
import { spoolAdvice } from '../journal/reader.js';
import type { LiveMonitor } from '../live/monitor.js';
import type { Scraper } from '../scrape/scraper.js';
import type { Hello } from '../server.js';
import { AgentConn } from '../server.js';
import { onStopSignal, stopReason } from '../stop-signals.js';
import { onAgentMessage } from './dispatch.js';
import { reopenJournal, waitForUploads } from './durable.js';
import type { JournalHeader } from './journal-header.js';
import { agentLost } from './losses.js';
import type { RunOnFleetOptions, RunResult } from './options.js';
import { RunSession } from './session.js';
import { EVERY_SECOND_MS, Watchdog } from './watchdog.js';
import { writeAndSummarize } from './write.js';

// The link an agent had before the coordinator stopped: gone (the agent comes back on a new one).
function goneLink(hello: Hello, index: number): AgentConn {
  const ws = { readyState: 3, send() {}, close() {}, terminate() {} };
  const conn = new AgentConn(hello, 'before the coordinator restarted', ws as never);
  conn.index = index;
  conn.closedNow(1006);
  return conn;
}

/** A run recovered from its journal. */
export class RecoveredSession extends RunSession {
  constructor(
    opts: RunOnFleetOptions,
    private readonly header: JournalHeader,
    private readonly journalRead: ReadJournal,
    dir: string,
    clock: Clock,
    scraper: Scraper,
  ) {
    super(
      opts,
      header.plan,
      header.run_id,
      dir,
      clock,
      header.agents.map((a) => goneLink(a.hello, a.index)),
      header.loss_budget,
      scraper,
    );
    this.listenUrl = header.options.listen_url;
  }

  private live: LiveMonitor | null = null;

  /**
   * Takes the run up from its journal before any agent can come back: the journal reopened, cut
   * to its last valid frame and synced (what the stopped process wrote but never synced is durable
   * only now), every durable message replayed, and every agent not final held as reconnecting.
   * Only then may the fleet listen: an agent back earlier would be told a mark not yet on disk.
   */
  async recover(): Promise<void> {
    const { header } = this;
    // The schedule is rebuilt from the plan: a build that would schedule differently cannot take the run up.
    if (this.schedule.sha256 !== header.schedule_sha256)
      throw new LoadfleetError(
        ErrorCode.JOURNAL_UNREADABLE,
        `cannot recover run ${this.runId}: its plan rebuilds a different schedule here (${this.schedule.sha256.slice(0, 12)}…, the run had ${header.schedule_sha256.slice(0, 12)}…); recover it with the version that ran it`,
        { exitCode: ExitCode.INVALID_INPUT, details: spoolAdvice(this.runId, header.agents) },
      );
    this.decision = header.decision;
    this.startNs = header.start_ns;
    this.steering = new ClockSteering(
      this.clock,
      header.decision,
      () => this.startNs,
      () => this.elapsedS(),
    );
    this.channels = header.agents.map((a, i) => {
      const ch = new AgentChannel(this.agents[i]!, a.index, this.channelHooks());
      for (const e of ['probe', 'probed', 'plan', 'prepared', 'arm', 'armed'] as const) ch.step(e);
      ch.startLocalNs = a.start_local_ns;
      ch.offset = a.offset;
      if (a.start_offset_ns !== null) ch.startOffsetNs = a.start_offset_ns;
      return ch;
    });
    this.states.push(...this.channels);
    this.live = this.collect();
    for (const s of this.states) s.onMessage((m) => onAgentMessage(this, s, m));
    await reopenJournal(this, this.journalRead.goodBytes);
    const replayed = this.replay();
    this.holdForReconnects(replayed);
  }

  override async run(): Promise<RunResult> {
    const live = this.live!;
    this.scraper.setRunStart(this.startNs, this.runStartNs() - this.startNs);
    const watchdog = new Watchdog(this);
    const ticker = setInterval(() => watchdog.tick(), EVERY_SECOND_MS);
    // A stop signal ends the recovered run as any run: its agents told to stop (when they are back), its directory written.
    const offStop = onStopSignal((signal) => this.stopAll(stopReason(signal)), 'run');
    live.start();
    try {
      // The run's deadline may have passed while it was down: its agents get their grace to come back.
      await this.waitForFinals(this.opts.agentGraceMs + 5000);
      await waitForUploads(this);
      if (this.fault) throw this.fault;
      return await writeAndSummarize(this);
    } finally {
      offStop();
      clearInterval(ticker);
      live.stop();
      await this.close();
    }
  }

  /** Ends the session's run state and closes its journal (also when recover() failed). */
  async close(): Promise<void> {
    this.moveRun('closing');
    this.moveRun('closed');
    for (const ch of this.channels) ch.dispose();
    await this.journal?.close();
  }

  // Every durable frame, in the order it was written, through the channels and the dispatch.
  private replay(): number {
    let replayed = 0;
    const half = Math.floor(this.journalRead.frames.length / 2);
    for (const [i, f] of this.journalRead.frames.entries()) {
      if (i === half) failpoint('recover.replay');
      if (f.kind === 'message') {
        const ch = this.channels[f.message.agent];
        if (!ch) continue;
        if (f.message.epoch !== ch.epoch) {
          // A restarted process's upload: lost first (as the run had it), then its own sequence space.
          if (!ch.lost) agentLost(this, ch, 'its process restarted');
          ch.attach(goneLink({ ...ch.conn.hello, epoch: f.message.epoch }, ch.index), true);
        }
        ch.replay(decodeAgentMessage(f.message.raw));
        replayed++;
      } else if (f.kind === 'event') {
        const e = f.event;
        const ch = e.type === 'lost' ? this.channels[e.agent] : undefined;
        if (e.type === 'lost' && ch && !ch.done) agentLost(this, ch, e.why);
        if (e.type === 'stop') this.stopAll(e.reason);
      }
    }
    return replayed;
  }

  // Every agent not final is held as reconnecting from the journal's last write, for its grace
  // counted from now; the outage is the run's first event.
  private holdForReconnects(replayed: number): void {
    const downFromS = Math.max(0, Math.round((this.journalRead.lastWriteMs * 1e6 - Number(this.startNs)) / 1e6) / 1e3);
    const restartedS = this.elapsedS();
    const duringLoad = downFromS < this.plan.duration_s;
    this.recovery = {
      down_from_s: downFromS,
      restarted_at_s: restartedS,
      replayed_messages: replayed,
      torn_tail_bytes: this.journalRead.tornTailBytes,
      zero_tail_bytes: this.journalRead.zeroTailBytes,
      during_load: duringLoad,
    };
    for (const s of this.states) {
      if (s.done) continue;
      s.step('link-down');
      s.outages.push({ from_s: downFromS, to_s: null, reason: 'the coordinator stopped', resumed: false });
      s.lastHeardMs = Date.now();
    }
    const torn = this.journalRead.tornTailBytes;
    const zeros = this.journalRead.zeroTailBytes;
    this.runEvents.unshift(
      `the coordinator stopped (its journal was last written at t=${downFromS.toFixed(1)} s) and was restarted at t=${restartedS.toFixed(1)} s; the run was recovered from its journal (${replayed} agent messages replayed${torn > 0 ? `, ${torn} bytes past its last valid frame dropped as its end (${zeros > 0 ? `${zeros} of them zeros, ` : ''}never acknowledged, so resent)` : ''})${duringLoad ? '; the outage fell in the load window: the agents kept their load going and resent what was not durable, but the server was not scraped and no clock was steered meanwhile' : ''}`,
    );
    const waiting = this.states.filter((s) => !s.done).map((s) => s.id);
    this.opts.log(
      `recovered run ${this.runId} from its journal: ${replayed} messages replayed; ${waiting.length > 0 ? `waiting up to ${this.opts.agentGraceMs / 1000} s for ${waiting.join(', ')} to reconnect` : 'every agent had handed over'}`,
    );
  }
}
