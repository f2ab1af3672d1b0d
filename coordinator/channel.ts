// One agent's channel in one run: the run's whole conversation with that agent — clock probes,
// the plan, the start instant, every message it sends, its `final`, its loss — and what the run
// knows of it (AgentState). Its phase moves only along the table in phases.ts. It owns every
// subscription the run has on the agent's link — moved to the new link when the agent resumes,
// all removed by dispose() when the run is over, waits included — so a fleet connection that
// serves run after run carries no earlier run's handlers. It takes each message that must arrive
// exactly once per sequence number (shared/delivery.ts: a duplicate is dropped and acknowledged
// again) and hands the run only the messages it takes, in order. An acknowledgement means durable:
// once the run has its journal, a message is acknowledged only when the journal has flushed it (the
// highest contiguous sequence number on disk), and once the run takes no more messages (it is
// closing, or its journal failed) a new one is refused, the link closed with the reason, so the
// agent keeps it in its spool.

import type { HeldOutResidual, OffsetLine } from '../figures/clock-types.js';
import type { Clock, OffsetEstimate, ProbeSample } from '../shared/clock.js';
import { fitOffset } from '../shared/clock.js';
import { SEQUENCED_TYPES, SeqReceiver } from '../shared/delivery.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import type { AgentHealth, AgentMessage, CoordinatorMessage, WarmUp } from '../shared/protocol.js';
import { CLOSE_CODE } from '../shared/protocol.js';
import type { AgentState, Outage } from './agent-state.js';
import type { Wait, WaitLimits, WaitMessage } from './channel-wait.js';
import { awaitReply } from './channel-wait.js';
import type { AgentEvent, AgentPhase } from './phases.js';
import { agentStep, eventOf, TERMINAL_PHASES } from './phases.js';
import type { AgentConn } from './server.js';

const PROBE_TIMEOUT_MS = 2000;

/** What the run hears from a channel besides the messages it takes. */
export interface ChannelHooks {
  /** The link the channel is on closed (not an earlier one it has left). */
  linkClosed(ch: AgentChannel): void;
  /** The agent sent a message its phase has no move for: dropped, and said here. */
  illegal?(ch: AgentChannel, err: LoadfleetError): void;
  /**
   * Makes a sequenced message (the bytes that arrived) durable before it is taken; the ack waits
   * for the promise. Null (or no hook): the run has no journal yet, and the message is acknowledged
   * once taken (before the load nothing is lost with the run: it is aborted or tried again).
   */
  durable?(ch: AgentChannel, raw: Uint8Array): Promise<void> | null;
  /** Why the run takes no new message (it is closing, or its journal failed), or null while it does. */
  refusal?(): string | null;
  /** A new message was refused with `why` (the link is closed; the agent keeps it in its spool). */
  refused?(ch: AgentChannel, why: string): void;
}

/** A (run, agent) channel on the coordinator. */
export class AgentChannel implements AgentState {
  private current: AgentConn;
  private phaseNow: AgentPhase = 'joined';
  /** The phase the agent had when its link went down: where a rejoin takes it back. */
  private beforeDown: AgentPhase = 'armed';
  private receiver = new SeqReceiver();
  /** The highest sequence number acknowledged as durable in this sequence space. */
  private durableMark = 0;
  /** Bumped with each new sequence space, so a flush of an earlier one acknowledges nothing in it. */
  private space = 0;
  private readonly handlers = new Set<(m: AgentMessage) => void>();
  private readonly waits = new Set<Wait>();
  private unsubscribe: (() => void)[] = [];
  private disposed = false;
  /** The agent process whose sequence space this is (its hello's epoch). */
  epoch: string | undefined;
  /** Duplicates dropped (and acknowledged) so far, across every link and epoch of the run. */
  duplicates = 0;
  /** New messages refused because the run took no more (each closed the link; the agent kept them). */
  refusedMessages = 0;
  /** Why the run told the agent to stop, if it did: said again when the agent rejoins. */
  stopReason: string | null = null;

  // What the run knows of the agent (agent-state.ts says what each field is).
  outages: Outage[] = [];
  offset: OffsetEstimate = { offset_ns: 0, uncertainty_ns: 0, rtt_ns: 0, probes: 0, used: 0 };
  startLocalNs = 0n;
  prepMs = 0;
  /** The agent's warm-up against the target, from its `prepared` (undefined from old agents). */
  warmUp: WarmUp | undefined;
  firstSendErrorNs: number | null = null;
  health: AgentHealth | null = null;
  terminated: string | null = null;
  failure: string | null = null;
  runProbes: ProbeSample[] = [];
  clockCorrectionNs: number | null = null;
  slewSteps: { t_s: number; drift_ppm: number; error_ns: number }[] = [];
  offsetLine: OffsetLine | null = null;
  domainSteps: { t_s: number; drift_ppm: number; error_ns: number }[] = [];
  startOffsetNs?: number;
  heldOut?: HeldOutResidual[];
  recoveredRecords = 0;
  spoolHandedOver = false;
  /** The link of a restarted process handing its spool over (null: none came). */
  uploadConn: AgentConn | null = null;
  lastHeardMs = Date.now();

  constructor(
    conn: AgentConn,
    /** Position in agents[] (the collector's and the share's index); kept across reconnects. */
    readonly index: number,
    private readonly hooks: ChannelHooks,
  ) {
    this.current = conn;
    this.epoch = conn.hello.epoch;
    this.subscribe(conn);
  }

  get conn(): AgentConn {
    return this.current;
  }

  get id(): string {
    return this.current.hello.agent_id;
  }

  get phase(): AgentPhase {
    return this.phaseNow;
  }

  /** AgentState's view of the channel (the phase and the mark live here). */
  get channel(): this {
    return this;
  }

  get reconnecting(): boolean {
    return this.phaseNow === 'reconnecting';
  }

  get final(): boolean {
    return this.phaseNow === 'final';
  }

  get lost(): boolean {
    return this.phaseNow === 'lost';
  }

  /** Whether the channel is in a terminal phase. */
  get done(): boolean {
    return TERMINAL_PHASES.has(this.phaseNow);
  }

  /**
   * Every sequenced message up to this one was taken and is durable: the mark acknowledged, and the
   * one a resume tells the agent (it resends from the next). Without a journal: every one taken.
   */
  get hwm(): number {
    return this.durableMark;
  }

  /** Every sequenced message up to this one was taken (some may still be on their way to disk). */
  get taken(): number {
    return this.receiver.hwm;
  }

  /** Moves the phase by `event` (phases.ts); an illegal move throws LF_PHASE_MOVE. */
  step(event: AgentEvent): AgentPhase {
    const to = agentStep(this.phaseNow, event, `agent ${this.id}`, this.beforeDown);
    if (event === 'link-down' && to !== this.phaseNow) this.beforeDown = this.phaseNow;
    // Armed while its link is down (the frame is lost with it): it comes back to arming.
    if (event === 'arm' && this.phaseNow === 'reconnecting') this.beforeDown = 'arming';
    this.phaseNow = to;
    return to;
  }

  send(m: CoordinatorMessage): void {
    this.current.send(m);
  }

  /** Subscribes to the messages the channel takes (unsequenced ones, and sequenced ones once each). */
  onMessage(fn: (m: AgentMessage) => void): () => void {
    this.handlers.add(fn);
    return () => this.handlers.delete(fn);
  }

  /** Measures the agent's clock at join: `count` probes one after another, the offset fitted. */
  async probeAtJoin(clock: Clock, count: number): Promise<OffsetEstimate> {
    this.step('probe');
    const samples: ProbeSample[] = [];
    for (let seq = 0; seq < count; seq++) samples.push(await this.probe(clock, seq));
    this.offset = fitOffset(samples, Math.max(1, Math.floor(count / 4)));
    this.step('probed');
    return this.offset;
  }

  /** One NTP-style probe; resolves with its four timestamps (`seq`: its own number, so a late reply completes no later probe). */
  probe(clock: Clock, seq: number): Promise<ProbeSample> {
    return this.await(
      (m, done) => {
        if (m.type !== 'probe_reply' || m.seq !== seq) return;
        const t4 = clock.nowNs();
        done.resolve({
          t1: m.t1_ns,
          t2: m.t2_ns,
          t3: m.t3_ns,
          t4,
          ...(m.clock_correction_ns !== undefined && { correctionNs: m.clock_correction_ns }),
        });
      },
      {
        ms: PROBE_TIMEOUT_MS,
        timedOut: (done) => done.reject(new Error(`agent ${this.id} did not answer a clock probe within ${PROBE_TIMEOUT_MS} ms`)),
        closed: (done) => done.reject(new Error(`agent ${this.id} closed its link during a clock probe`)),
      },
      () => this.send({ type: 'probe', seq, t1_ns: clock.nowNs() }),
    );
  }

  /** Gives the agent the plan and its share; resolves with its preparation time (ms). */
  prepare(plan: Extract<CoordinatorMessage, { type: 'plan' }>, timeoutMs: number): Promise<number> {
    this.step('plan');
    return this.await(
      (m, done) => {
        if (m.type === 'prepared') {
          this.prepMs = m.prep_ms;
          this.warmUp = m.warm_up;
          done.resolve(m.prep_ms);
        } else if (m.type === 'failed') {
          this.fail(`${m.code}: ${m.message}`);
          done.reject(
            new LoadfleetError(ErrorCode.AGENT_FAILED, `agent ${this.id} could not prepare: ${m.message}`, { exitCode: ExitCode.ABORTED }),
          );
        }
      },
      {
        ms: timeoutMs,
        timedOut: (done) => {
          const why = `did not prepare within ${timeoutMs / 1000} s`;
          this.fail(why);
          done.reject(new LoadfleetError(ErrorCode.ARM_TIMEOUT, `agent ${this.id} ${why}`, { exitCode: ExitCode.ABORTED }));
        },
        closed: (done) => {
          this.fail('closed its link while preparing');
          done.reject(new Error(`agent ${this.id} closed its link while preparing`));
        },
      },
      () => this.send(plan),
    );
  }

  /**
   * Tells the agent the start instant (its own clock); resolves true once it is armed, false when
   * `deadlineMs` passes first. A link that closes meanwhile is the run's to handle (it may rejoin).
   */
  arm(startLocalNs: bigint, deadlineMs: number): Promise<boolean> {
    this.startLocalNs = startLocalNs;
    this.step('arm');
    return this.await(
      (m, done) => {
        if (m.type === 'armed') done.resolve(true);
      },
      { ms: Math.max(0, deadlineMs), timedOut: (done) => done.resolve(false) },
      () => this.send({ type: 'arm', start_local_ns: startLocalNs }),
    );
  }

  /** Tells the agent to stop (its final is awaited); a reconnecting agent hears it when it rejoins. */
  stop(reason: string): void {
    if (this.done) return;
    this.stopReason ??= reason;
    this.step('stop');
    this.send({ type: 'stop', reason });
  }

  /** Before the start: the agent failed (or timed out, or its link closed); `why` is failed-run.json's detail. */
  fail(why: string): void {
    this.failure = why;
    this.step('fail');
  }

  /**
   * Moves the channel to the agent's new link. `newEpoch`: a restarted process, whose sequence
   * space starts again (it hands over its spool).
   */
  attach(conn: AgentConn, newEpoch = false): void {
    this.release();
    this.current = conn;
    if (newEpoch) {
      this.receiver = new SeqReceiver();
      this.durableMark = 0;
      this.space++;
      this.epoch = conn.hello.epoch;
    }
    this.subscribe(conn);
  }

  /** The run is over: no handler or wait of it stays on the link. Idempotent. */
  dispose(): void {
    this.disposed = true;
    this.release();
    this.handlers.clear();
    for (const w of [...this.waits]) w.cancel();
  }

  // A wait on the agent's replies with a deadline and a link that may close (channel-wait.ts).
  private await<T>(onMessage: WaitMessage<T>, limits: WaitLimits<T>, ask: () => void): Promise<T> {
    return awaitReply(this.waits, `agent ${this.id}`, onMessage, limits, ask);
  }

  private release(): void {
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
  }

  private subscribe(conn: AgentConn): void {
    if (this.disposed) return;
    this.unsubscribe.push(
      conn.onMessage((m, raw) => this.receive(conn, m, raw)),
      conn.onClose(() => {
        if (conn !== this.current || this.disposed) return;
        for (const w of [...this.waits]) w.closed();
        this.hooks.linkClosed(this);
      }),
    );
  }

  private receive(conn: AgentConn, m: AgentMessage, raw: Uint8Array | undefined): void {
    if (SEQUENCED_TYPES.has(m.type)) {
      const rseq = (m as { rseq: number }).rseq;
      // Past the point the run can write it, a new message is refused, never acknowledged.
      const why = rseq > this.receiver.hwm ? this.hooks.refusal?.() : null;
      if (why) {
        this.refusedMessages++;
        this.hooks.refused?.(this, why);
        conn.close(why, CLOSE_CODE.UNKNOWN_RUN);
        return;
      }
      const r = this.receiver.receive(rseq);
      if (r === 'gap') return; // resent from hwm + 1 when the agent resumes
      if (r === 'duplicate') {
        this.duplicates++;
        conn.send({ type: 'ack', seq: this.durableMark });
        return;
      }
      const flushed = raw ? (this.hooks.durable?.(this, raw) ?? null) : null;
      this.take(m);
      if (flushed === null) this.markDurable(rseq, this.space);
      else {
        const space = this.space;
        // A journal that failed acknowledges nothing more: the run ends with its error.
        flushed.then(
          () => this.markDurable(rseq, space),
          () => {},
        );
      }
      return;
    }
    this.take(m);
  }

  /**
   * A message the run's journal holds, taken again by a recovering coordinator: as when it arrived,
   * but already durable (its mark is where the agent resends from when it rejoins).
   */
  replay(m: AgentMessage): void {
    if (SEQUENCED_TYPES.has(m.type)) {
      const rseq = (m as { rseq: number }).rseq;
      if (this.receiver.receive(rseq) !== 'take') return;
      this.durableMark = rseq;
    }
    this.take(m);
  }

  // Acknowledges up to `rseq` once it is durable (flushes settle in order: the mark only rises).
  private markDurable(rseq: number, space: number): void {
    if (space !== this.space || rseq <= this.durableMark) return;
    this.durableMark = rseq;
    if (!this.disposed) this.current.send({ type: 'ack', seq: rseq });
  }

  // The message moves the phase (a lost channel takes only a restarted process's upload), then
  // the waits and the run hear it.
  private take(m: AgentMessage): void {
    this.lastHeardMs = Date.now();
    try {
      this.step(this.phaseNow === 'lost' ? 'upload' : eventOf(m.type));
    } catch (err) {
      if (!(err instanceof LoadfleetError)) throw err;
      this.hooks.illegal?.(this, err);
      return;
    }
    for (const w of [...this.waits]) w.message(m);
    for (const fn of [...this.handlers]) fn(m);
  }
}
