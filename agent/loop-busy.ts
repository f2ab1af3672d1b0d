// How late a timestamp may be. The agent stamps bytes when its event loop reads them; bytes that
// arrive while the loop is busy wait, unread, until its next poll. Two bounds on that wait, both
// read at every socket read, and the smaller one is recorded with each first-token stamp:
//
// - Since the loop last waited: bytes that arrive while the loop waits in its poll wake it at
//   once. Node exposes cumulative idle (waiting) and active time, not the instant of the wake, but
//   the idle total changes only when the loop has waited: when it changed since the previous look,
//   the loop woke after that look, so busy time since the wake ≤ active now − active then.
// - Since the turn before last: a busy loop that never waits still polls every turn, and a poll
//   reads every socket that is readable at that moment. Bytes read now were not readable at the
//   previous turn's poll (or they would have been read there), and that poll came after the end
//   of the turn before it. A marker in the check phase of each turn that read something records
//   when those turns ended.
//
// Neither sees the kernel's own wake-up; a loop that neither waits nor turns promises nothing.
// Nor does either see time the process spent runnable but off a CPU (a contended host): the
// figure is therefore an estimate, and the agent's self-test measures how often it covers the
// real stamp error (self_test.uncertainty_coverage).
import { performance } from 'node:perf_hooks';

/** The event loop as the bound needs it: cumulative idle and active ms, and a monotonic ms clock. */
export interface LoopClock {
  times(): { idle: number; active: number };
  nowMs(): number;
  /** Runs `fn` in this turn's check phase (setImmediate). */
  afterPoll(fn: () => void): void;
}

const NODE_LOOP: LoopClock = {
  times: () => performance.eventLoopUtilization(),
  nowMs: () => performance.now(),
  afterPoll: (fn) => void setImmediate(fn),
};

/** Tracks how long bytes read now may have waited unread. */
export class LoopBusy {
  private idleMs: number;
  private activeMs: number;
  private activeAtWakeMs: number;
  /** When the last two turns that read something ended (their check phase), older first. */
  private turnEndedMs = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
  private markerPending = false;

  constructor(private readonly loop: LoopClock = NODE_LOOP) {
    const { idle, active } = loop.times();
    this.idleMs = idle;
    this.activeMs = this.activeAtWakeMs = active;
  }

  /** Call at every socket read: an upper bound, in ns, on how long its bytes may have waited unread. */
  readDelayBoundNs(): number {
    const sinceWaitMs = this.look();
    const sinceTurnBeforeLastMs = this.loop.nowMs() - this.turnEndedMs[0]!;
    if (!this.markerPending) {
      this.markerPending = true;
      this.loop.afterPoll(this.marker);
    }
    return Math.max(0, Math.round(Math.min(sinceWaitMs, sinceTurnBeforeLastMs) * 1e6));
  }

  /**
   * Call at a socket read that needs no bound (a stream past its first token): it only keeps the
   * turn-end marker coming. Skipping the look changes no bound: the marker's look, in the check
   * phase after every read of its turn, is later than any read's, and the next wake measures from it.
   */
  noteRead(): void {
    if (!this.markerPending) {
      this.markerPending = true;
      this.loop.afterPoll(this.marker);
    }
  }

  /** A look after long work outside a read, so a wait after it does not count that work. */
  settle(): void {
    this.look();
  }

  // Busy ms since the loop last waited (see above); every look tightens the next wake's bound.
  private look(): number {
    const { idle, active } = this.loop.times();
    if (idle !== this.idleMs) {
      this.idleMs = idle;
      this.activeAtWakeMs = this.activeMs;
    }
    this.activeMs = active;
    return active - this.activeAtWakeMs;
  }

  // One pending at a time, so each marker ends a different turn.
  private readonly marker = (): void => {
    this.markerPending = false;
    this.look();
    this.turnEndedMs = [this.turnEndedMs[1]!, this.loop.nowMs()];
  };
}

/** This thread's loop (worker threads have their own event loop, and their own copy of this module). */
export const loopBusy = new LoopBusy();
