// The protocol's delivery rule, written down: the sequencing every message that must arrive
// follows, and how each side notices a dead link. Pure (no I/O): the coordinator's AgentChannel
// (coordinator/channel.ts) and the agent's Outbox (agent/outbox.ts) implement it. The per-agent
// phase machines are coordinator/phases.ts and agent/run-phase.ts.
//
// Delivery (the shape of Kafka's idempotent producer):
// - Every message that must arrive — `records`, `interval`, `started`, `failed`, `final`, and a
//   restarted process's spool upload — carries `rseq`, one sequence space per (agent epoch, run),
//   counted from 1 after the run's `welcome` (an upload counts from 1 after its `resume`).
// - The coordinator keeps a high-water mark per channel: it takes `rseq = hwm + 1` and advances,
//   drops `rseq <= hwm` as a duplicate, and answers both with `ack { seq: hwm }`, a cumulative
//   acknowledgement of every message up to hwm. A gap (`rseq > hwm + 1`, only possible when frames
//   of a dead link were lost) is dropped unacknowledged: the agent resends from hwm + 1 when it
//   resumes (`resume` carries hwm).
// - The agent keeps every sequenced message until an ack covers it, and resends all of them in
//   order on a resumed link. `final` is one of them: the agent has handed over only when `final`
//   is acknowledged, and only then deletes its spool.
// - The epoch is the agent process (a random id in its hello): a resume with the epoch the channel
//   knows is the same process after a cut link; another epoch is a restarted process, whose
//   sequence space starts again (it can only hand over its spool).
//
// Liveness: each side pings the other every PING_INTERVAL_MS at the WebSocket level and drops a
// link whose peer has not answered for LINK_SILENCE_MS, during a run and between runs, so a link
// that stops carrying frames without closing (blackholed either way, half-open TCP) is noticed
// within SILENCE_DETECTION_BOUND_MS by both ends.

/** Each side pings this often. */
export const PING_INTERVAL_MS = 1000;
/** A link whose peer sent no pong (nor any frame) for this long is dropped. */
export const LINK_SILENCE_MS = 5000;
/** Worst case from the last frame that got through to the link being dropped: silence plus one check period. */
export const SILENCE_DETECTION_BOUND_MS = LINK_SILENCE_MS + PING_INTERVAL_MS;

/** Message types that carry `rseq` and are resent until acknowledged. */
export const SEQUENCED_TYPES: ReadonlySet<string> = new Set(['records', 'interval', 'started', 'failed', 'final']);

/** What the coordinator does with a sequenced message. */
export type Receipt = 'take' | 'duplicate' | 'gap';

/** The coordinator's high-water mark over one (epoch, run) sequence space. */
export class SeqReceiver {
  /** Every message up to this one was taken (0: none yet). */
  hwm = 0;
  /** Duplicates dropped (still acknowledged). */
  duplicates = 0;
  /** Out-of-order messages dropped unacknowledged (resent from hwm + 1 on resume). */
  gaps = 0;

  /** Classifies `rseq` and advances the mark when it is the next one. */
  receive(rseq: number): Receipt {
    if (rseq === this.hwm + 1) {
      this.hwm = rseq;
      return 'take';
    }
    if (rseq <= this.hwm) {
      this.duplicates++;
      return 'duplicate';
    }
    this.gaps++;
    return 'gap';
  }
}
