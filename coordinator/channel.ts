// One agent's channel in one run (shared/channel.ts has the state machine and the delivery
// rule). It owns every subscription the run has on the agent's link — moved to the new link when
// the agent resumes, all removed by dispose() when the run is over — so a fleet connection that
// serves run after run carries no earlier run's handlers. It acknowledges each message that must
// arrive exactly once per sequence number (a duplicate is dropped and acknowledged again) and
// hands the run only the messages it takes, in order.
import type { ChannelPhase } from '../shared/delivery.js';
import { channelMayMove, SEQUENCED_TYPES, SeqReceiver } from '../shared/delivery.js';
import type { AgentMessage } from '../shared/protocol.js';
import type { AgentConn } from './server.js';

/** A (run, agent) channel on the coordinator. */
export class AgentChannel {
  private current: AgentConn;
  private phaseNow: ChannelPhase = 'joined';
  private receiver = new SeqReceiver();
  private readonly handlers = new Set<(m: AgentMessage) => void>();
  private unsubscribe: (() => void)[] = [];
  private disposed = false;
  /** The agent process whose sequence space this is (its hello's epoch). */
  epoch: string | undefined;

  constructor(
    conn: AgentConn,
    /** Called when the link the channel is on closes (not an earlier one it has left). */
    private readonly onLinkClosed: (conn: AgentConn) => void,
  ) {
    this.current = conn;
    this.epoch = conn.hello.epoch;
    this.subscribe(conn);
  }

  get conn(): AgentConn {
    return this.current;
  }

  get phase(): ChannelPhase {
    return this.phaseNow;
  }

  /** Every sequenced message up to this one was taken. */
  get hwm(): number {
    return this.receiver.hwm;
  }

  /** Duplicates dropped (and acknowledged) so far, across every link and epoch of the run. */
  duplicates = 0;

  /**
   * Moves to `to` when the state machine allows it; returns whether it did. An illegal move is
   * refused rather than thrown: it runs inside a link's message handler, and a terminal phase
   * must stay terminal whatever arrives late.
   */
  move(to: ChannelPhase): boolean {
    if (to === this.phaseNow) return true;
    if (!channelMayMove(this.phaseNow, to)) return false;
    this.phaseNow = to;
    return true;
  }

  /** Whether the channel is in a terminal phase. */
  get done(): boolean {
    return this.phaseNow === 'final' || this.phaseNow === 'lost' || this.phaseNow === 'failed';
  }

  /** Subscribes to the messages the channel takes (unsequenced ones, and sequenced ones once each). */
  onMessage(fn: (m: AgentMessage) => void): () => void {
    this.handlers.add(fn);
    return () => this.handlers.delete(fn);
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
      this.epoch = conn.hello.epoch;
    }
    this.subscribe(conn);
  }

  /** The run is over: no handler of it stays on the link. Idempotent. */
  dispose(): void {
    this.disposed = true;
    this.release();
    this.handlers.clear();
  }

  private release(): void {
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
  }

  private subscribe(conn: AgentConn): void {
    if (this.disposed) return;
    this.unsubscribe.push(
      conn.onMessage((m) => this.receive(conn, m)),
      conn.onClose(() => {
        if (conn === this.current && !this.disposed) this.onLinkClosed(conn);
      }),
    );
  }

  private receive(conn: AgentConn, m: AgentMessage): void {
    if (SEQUENCED_TYPES.has(m.type)) {
      const r = this.receiver.receive((m as { rseq: number }).rseq);
      if (r === 'gap') return; // resent from hwm + 1 when the agent resumes
      if (r === 'duplicate') {
        this.duplicates++;
        conn.send({ type: 'ack', seq: this.receiver.hwm });
        return;
      }
      for (const fn of [...this.handlers]) fn(m);
      conn.send({ type: 'ack', seq: this.receiver.hwm });
      return;
    }
    for (const fn of [...this.handlers]) fn(m);
  }
}
