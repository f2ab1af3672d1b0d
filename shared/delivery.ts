// The protocol's state machines, written down: what a (run, agent) channel may go through on the
// coordinator, what a run may go through, and the sequencing rule every message that must arrive
// follows. Pure (no I/O): the coordinator's AgentChannel (coordinator/channel.ts) and the agent's
// Outbox (agent/outbox.ts) implement them, and the unit tests check them here.
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

/**
 * Phases of one agent's channel in one run (coordinator side):
 *
 *   joined → armed → live ⇄ reconnecting → final
 *      │        │ ↖_____________↙ │
 *      └────────┴──────┴──────────┴──→ lost | failed
 *
 * (any non-terminal phase may also go to final: an agent can finish a short run before its
 * `started` is seen; a reconnecting agent that had not started yet goes back to armed)
 *
 * joined: the run took the agent (welcome, probes, plan); armed: it confirmed the start instant;
 * live: load under way; reconnecting: its link is down and it is within its grace; final: its
 * `final` is merged (terminal); lost: its grace ran out or its process restarted (terminal; a
 * restarted process may still hand over its spool); failed: it reported a failure (terminal).
 */
export type ChannelPhase = 'joined' | 'armed' | 'live' | 'reconnecting' | 'final' | 'lost' | 'failed';

const CHANNEL_MOVES: Record<ChannelPhase, readonly ChannelPhase[]> = {
  joined: ['armed', 'reconnecting', 'final', 'lost', 'failed'],
  armed: ['live', 'reconnecting', 'final', 'lost', 'failed'],
  live: ['reconnecting', 'final', 'lost', 'failed'],
  reconnecting: ['armed', 'live', 'final', 'lost', 'failed'],
  final: [],
  lost: [],
  failed: [],
};

/** Whether a channel may go from `from` to `to`. */
export function channelMayMove(from: ChannelPhase, to: ChannelPhase): boolean {
  return CHANNEL_MOVES[from].includes(to);
}

/**
 * Phases of a run (coordinator side): open (taking agents back: resumes are routed to it) →
 * closing (every channel is terminal, or the run was stopped and is being written: a resume is
 * refused, but a `final` it already merged is still acknowledged to an agent that asks) → closed
 * (its channels are disposed; no handler of it is left on any link).
 */
export type RunPhase = 'open' | 'closing' | 'closed';

const RUN_MOVES: Record<RunPhase, readonly RunPhase[]> = { open: ['closing'], closing: ['closed'], closed: [] };

/** Whether a run may go from `from` to `to`. */
export function runMayMove(from: RunPhase, to: RunPhase): boolean {
  return RUN_MOVES[from].includes(to);
}

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
