// What the agent sends outlives a cut link, and goes at the pace the coordinator takes it. Every
// message that must arrive (records, interval, started, failed, final: shared/delivery.ts) gets
// the next sequence number of the run (`rseq`) and stays here until the coordinator's cumulative
// ack covers it; after a reconnect all of them are resent in order from the coordinator's
// high-water mark (it drops any it already has and still acks them), so a frame swallowed by a
// link that died unnoticed is never lost, however many cuts come in a row.
//
// Flow control is here too, and only here: at most BATCH_WINDOW record batches go unacknowledged.
// Batches beyond it wait here unnumbered (a later one is folded into the last waiting one up to
// BATCH_ROWS rows), and `final` waits behind them, so the coordinator merges `final` after every
// record; intervals and the other messages do not wait. An ack is one number, an rseq: it frees
// the window, and nothing above the outbox needs to know which batch it covered. The outbox also
// numbers the record batches (records.seq: 0, 1, … in each run).
//
// Heartbeats and probe replies only mean something now: they are dropped while the link is down;
// the run's setup messages (prepared, armed) are answered by their own timeouts.
import { SEQUENCED_TYPES } from '../shared/delivery.js';
import { ErrorCode, LoadfleetError } from '../shared/errors.js';
import type { AgentMessage, SequencedMessage } from '../shared/protocol.js';

/** Where the outbox writes: an open link (its send drops frames once the socket is gone). */
export interface Sink {
  send(m: AgentMessage): void;
}

/** Record batches allowed unacknowledged at once: memory stays bounded on both sides, and a resend after a cut is short. */
export const BATCH_WINDOW = 8;
/** Rows a record batch holds at most. */
export const BATCH_ROWS = 1000;

type Records = Extract<AgentMessage, { type: 'records' }>;

const PERISHABLE = new Set<AgentMessage['type']>(['heartbeat', 'probe_reply']);

function isSequenced(m: AgentMessage): m is SequencedMessage {
  return SEQUENCED_TYPES.has(m.type);
}

/** The agent's sending side across reconnects, for one run's sequence space at a time. */
export class Outbox {
  private sink: Sink | null = null;
  /** Sequenced messages not yet covered by an ack, in rseq order. */
  private unacked: SequencedMessage[] = [];
  /** Record batches not yet covered by an ack (of unacked). */
  private batchesOut = 0;
  /** Record batches beyond the window, and a `final` behind them: not numbered yet. */
  private held: SequencedMessage[] = [];
  /** Unsequenced messages that waited for the link (not perishable ones). */
  private queued: AgentMessage[] = [];
  private nextRseq = 1;
  private nextBatch = 0;
  private ackWaiters: { rseq: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  private drainWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];

  /**
   * Sends now when the link is up; otherwise keeps what must arrive and drops what is perishable.
   * Returns the sequence number given to a message that must arrive (0: unsequenced, or waiting
   * for the window; allAcked() covers those too).
   */
  send(m: AgentMessage): number {
    if (!isSequenced(m)) {
      if (this.sink) this.sink.send(m);
      else if (!PERISHABLE.has(m.type)) this.queued.push(m);
      return 0;
    }
    if (m.type === 'records' && (this.held.length > 0 || this.batchesOut >= BATCH_WINDOW)) {
      this.hold(m);
      return 0;
    }
    if (m.type === 'final' && this.held.length > 0) {
      this.held.push(m);
      return 0;
    }
    return this.number(m);
  }

  /** The coordinator took everything up to `upTo`: returns the messages that ack covered, in order. */
  ack(upTo: number): SequencedMessage[] {
    let n = 0;
    while (n < this.unacked.length && this.unacked[n]!.rseq! <= upTo) n++;
    const covered = this.unacked.splice(0, n);
    for (const m of covered) if (m.type === 'records') this.batchesOut--;
    for (let i = this.ackWaiters.length - 1; i >= 0; i--) {
      const w = this.ackWaiters[i]!;
      if (w.rseq <= upTo) {
        this.ackWaiters.splice(i, 1);
        w.resolve();
      }
    }
    this.release();
    if (this.unacked.length === 0 && this.held.length === 0) for (const w of this.drainWaiters.splice(0)) w.resolve();
    return covered;
  }

  /** Resolves once an ack covers `rseq`; rejects (LF_UNACKED) if the outbox is reset first. */
  acked(rseq: number): Promise<void> {
    if (!this.unacked.some((m) => m.rseq! <= rseq)) return Promise.resolve();
    return new Promise((resolve, reject) => this.ackWaiters.push({ rseq, resolve, reject }));
  }

  /**
   * Resolves once every message that must arrive, sent so far (waiting ones included), is
   * acknowledged; rejects (LF_UNACKED) if the outbox is reset first.
   */
  allAcked(): Promise<void> {
    if (this.unacked.length === 0 && this.held.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => this.drainWaiters.push({ resolve, reject }));
  }

  /** The link is gone: hold everything from now on. */
  down(): void {
    this.sink = null;
  }

  /**
   * A link is up and the coordinator resumed us at its high-water mark `acked` (when it said):
   * what that covers is dropped, every other sequenced message is resent in order, then what waited.
   */
  up(sink: Sink, acked?: number): { resent: number; queued: number; covered: SequencedMessage[] } {
    const covered = acked === undefined ? [] : this.ack(acked);
    this.sink = sink;
    for (const m of this.unacked) sink.send(m);
    const waiting = this.queued;
    this.queued = [];
    for (const m of waiting) sink.send(m);
    return { resent: this.unacked.length, queued: waiting.length, covered };
  }

  /**
   * A new run starts a new sequence space (the last one's messages were all acknowledged or given
   * up on). Whoever still waits for an ack of the last one is told it will never come (rejected
   * with LF_UNACKED and `reason`, and how many messages were left unacknowledged): a waiter left
   * hanging would keep a hand-over open for ever, and a waiter resolved would delete a spool
   * nobody took. Returns how many waiters were settled.
   */
  reset(reason = 'a new run began'): number {
    const left = this.unacked.length + this.held.length;
    const waiters = [...this.ackWaiters, ...this.drainWaiters];
    if (waiters.length > 0) {
      const err = new LoadfleetError(ErrorCode.UNACKED, `${left} message(s) never acknowledged: ${reason}`);
      for (const w of waiters) w.reject(err);
    }
    this.unacked = [];
    this.held = [];
    this.queued = [];
    this.batchesOut = 0;
    this.nextRseq = 1;
    this.nextBatch = 0;
    this.ackWaiters = [];
    this.drainWaiters = [];
    return waiters.length;
  }

  /** Sequenced messages waiting for an ack. */
  get pending(): number {
    return this.unacked.length;
  }

  /** Record batches (and a final) waiting for the window. */
  get waiting(): number {
    return this.held.length;
  }

  /** Whether the link is up. */
  get isUp(): boolean {
    return this.sink !== null;
  }

  private number(m: SequencedMessage): number {
    const s = (
      m.type === 'records' ? { ...m, seq: this.nextBatch++, rseq: this.nextRseq++ } : { ...m, rseq: this.nextRseq++ }
    ) as SequencedMessage;
    if (s.type === 'records') this.batchesOut++;
    this.unacked.push(s);
    this.sink?.send(s);
    return s.rseq!;
  }

  // A batch beyond the window waits, folded into the last waiting one while that has room.
  private hold(m: Records): void {
    const last = this.held.at(-1);
    if (last?.type === 'records' && last.rows.length + m.rows.length <= BATCH_ROWS) {
      this.held[this.held.length - 1] = { ...last, rows: last.rows.concat(m.rows) };
      return;
    }
    this.held.push(m);
  }

  // The window has room again: what waited goes, in order (`final` only once no batch waits before it).
  private release(): void {
    while (this.held.length > 0) {
      const next = this.held[0]!;
      if (next.type === 'records' && this.batchesOut >= BATCH_WINDOW) return;
      this.held.shift();
      this.number(next);
    }
  }
}
