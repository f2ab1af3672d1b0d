// What the agent sends outlives a cut link. Record batches stay here until the coordinator
// acknowledges them and are resent after a reconnect (the coordinator drops rows it already has,
// so each request lands once); the other messages that carry results (intervals, started, final,
// failed) wait while the link is down; heartbeats and probe replies only mean something now, so
// they are dropped instead. A frame sent in the moments before the agent notices a dead link is
// lost without a trace, so the last intervals sent are resent after a reconnect too (intervals
// are not acknowledged; the coordinator drops one it already has).
import type { AgentMessage } from '../shared/protocol.js';

/** Where the outbox writes: an open link (its send drops frames once the socket is gone). */
export interface Sink {
  send(m: AgentMessage): void;
}

const PERISHABLE = new Set<AgentMessage['type']>(['heartbeat', 'probe_reply']);
/** Intervals resent after a reconnect: more seconds than an unnoticed dead link lasts (heartbeat timeout 5 s). */
const RECENT_INTERVALS = 16;

/** The agent's sending side across reconnects. */
export class Outbox {
  private sink: Sink | null = null;
  private readonly unacked = new Map<number, AgentMessage>();
  private queued: AgentMessage[] = [];
  private recentIntervals: AgentMessage[] = [];

  /** Sends now when the link is up; otherwise keeps what must arrive and drops what is perishable. */
  send(m: AgentMessage): void {
    if (m.type === 'records') this.unacked.set(m.seq, m);
    if (m.type === 'interval' && this.sink) {
      this.recentIntervals.push(m);
      if (this.recentIntervals.length > RECENT_INTERVALS) this.recentIntervals.shift();
    }
    if (this.sink) this.sink.send(m);
    else if (m.type !== 'records' && !PERISHABLE.has(m.type)) this.queued.push(m);
  }

  /** The coordinator took record batch `seq`. */
  ack(seq: number): void {
    this.unacked.delete(seq);
  }

  /** The link is gone: hold everything from now on. */
  down(): void {
    this.sink = null;
  }

  /** A link is up and the coordinator resumed us: resend unacknowledged batches and recent intervals, then what waited. */
  up(sink: Sink): { resent: number; queued: number } {
    this.sink = sink;
    const batches = [...this.unacked.entries()].sort((a, b) => a[0] - b[0]).map(([, m]) => m);
    for (const m of batches) sink.send(m);
    for (const m of this.recentIntervals) sink.send(m);
    const waiting = this.queued;
    this.queued = [];
    for (const m of waiting) sink.send(m);
    return { resent: batches.length, queued: waiting.length };
  }

  /** A new run starts clean (the last one's batches were all acknowledged or given up on). */
  reset(): void {
    this.unacked.clear();
    this.queued = [];
    this.recentIntervals = [];
  }

  /** Whether the link is up. */
  get isUp(): boolean {
    return this.sink !== null;
  }
}
