// What the agent sends outlives a cut link. Every message that must arrive (records, interval,
// started, failed, final: shared/delivery.ts) gets the next sequence number of the run and stays
// here until the coordinator's cumulative ack covers it; after a reconnect all of them are resent
// in order from the coordinator's high-water mark (it drops any it already has and still acks
// them), so a frame swallowed by a link that died unnoticed is never lost, however many cuts come
// in a row. Heartbeats and probe replies only mean something now: they are dropped while the link
// is down; the run's setup messages (prepared, armed) are answered by their own timeouts.
import { SEQUENCED_TYPES } from '../shared/delivery.js';
import type { AgentMessage, SequencedMessage } from '../shared/protocol.js';

/** Where the outbox writes: an open link (its send drops frames once the socket is gone). */
export interface Sink {
  send(m: AgentMessage): void;
}

const PERISHABLE = new Set<AgentMessage['type']>(['heartbeat', 'probe_reply']);

function isSequenced(m: AgentMessage): m is SequencedMessage {
  return SEQUENCED_TYPES.has(m.type);
}

/** The agent's sending side across reconnects, for one run's sequence space at a time. */
export class Outbox {
  private sink: Sink | null = null;
  /** Sequenced messages not yet covered by an ack, in rseq order. */
  private unacked: SequencedMessage[] = [];
  /** Unsequenced messages that waited for the link (not perishable ones). */
  private queued: AgentMessage[] = [];
  private nextSeq = 1;
  private readonly ackWaiters: { rseq: number; resolve: () => void }[] = [];

  /**
   * Sends now when the link is up; otherwise keeps what must arrive and drops what is perishable.
   * Returns the sequence number given to a message that must arrive (else 0).
   */
  send(m: AgentMessage): number {
    if (isSequenced(m)) {
      const s = { ...m, rseq: this.nextSeq++ } as SequencedMessage;
      this.unacked.push(s);
      this.sink?.send(s);
      return s.rseq!;
    }
    if (this.sink) this.sink.send(m);
    else if (!PERISHABLE.has(m.type)) this.queued.push(m);
    return 0;
  }

  /** The coordinator took everything up to `upTo`: returns the messages that ack covered, in order. */
  ack(upTo: number): SequencedMessage[] {
    let n = 0;
    while (n < this.unacked.length && this.unacked[n]!.rseq! <= upTo) n++;
    const covered = this.unacked.splice(0, n);
    for (let i = this.ackWaiters.length - 1; i >= 0; i--) {
      const w = this.ackWaiters[i]!;
      if (w.rseq <= upTo) {
        this.ackWaiters.splice(i, 1);
        w.resolve();
      }
    }
    return covered;
  }

  /** Resolves once an ack covers `rseq`. */
  acked(rseq: number): Promise<void> {
    if (!this.unacked.some((m) => m.rseq! <= rseq)) return Promise.resolve();
    return new Promise((resolve) => this.ackWaiters.push({ rseq, resolve }));
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

  /** A new run starts a new sequence space (the last one's messages were all acknowledged or given up on). */
  reset(): void {
    this.unacked = [];
    this.queued = [];
    this.nextSeq = 1;
    this.ackWaiters.length = 0;
  }

  /** Sequenced messages waiting for an ack. */
  get pending(): number {
    return this.unacked.length;
  }

  /** Whether the link is up. */
  get isUp(): boolean {
    return this.sink !== null;
  }
}
