// Sub-millisecond wake-ups without a busy loop. The event loop's timers have 1 ms steps, so the
// last millisecond before a send used to be spent yielding with setImmediate until it was due: a
// spin. At 1,000 sends a second every instant is within that millisecond of the next, the loop
// spun all the time, read as 99% busy (the run flagged client-limited at a fraction of the work)
// and took a core the target or the kubelet's CPU limit needed. Now a small thread sleeps on a
// futex until the earliest instant asked for and wakes the loop with one message; the loop waits
// in its poll meanwhile, free to read and stamp.
import { Worker } from 'node:worker_threads';
import { CONTROL_SLOTS, GENERATION, READY, STOP } from './metronome-slots.js';

interface Waiter {
  atNs: bigint;
  wake: () => void;
}

/** One thread's wake-ups at instants on process.hrtime's clock. */
export class Metronome {
  private readonly target = new BigInt64Array(new SharedArrayBuffer(8));
  private readonly control = new Int32Array(new SharedArrayBuffer(4 * CONTROL_SLOTS));
  /** Pending wake-ups, earliest first (a handful at a time: one per stripe sleeping). */
  private waiters: Waiter[] = [];
  private readonly thread: Worker;
  /** The thread is up: until then a wait would include its start (~30 ms), so callers serve themselves. */
  ready = false;

  constructor() {
    this.thread = new Worker(new URL('./metronome-thread.js', import.meta.url), {
      workerData: { due: this.target.buffer, control: this.control.buffer },
    });
    this.thread.on('message', (m: number) => {
      if (m === READY) this.ready = true;
      else this.onTick();
    });
    // A thread that failed or ended serves no one: its waiters step again at once and, with
    // `ready` false, yield turn by turn instead (timing.ts). Nothing waits on a dead thread.
    const gone = (): void => {
      this.ready = false;
      for (const w of this.waiters.splice(0)) w.wake();
    };
    this.thread.on('error', gone);
    this.thread.on('exit', gone);
    this.thread.unref(); // held only while someone waits (below): it never keeps the agent alive
  }

  /** Resolves at `atNs` (process.hrtime.bigint()), late by the kernel's wake-up and this loop's turn. */
  at(atNs: bigint): Promise<void> {
    return new Promise((wake) => {
      let i = this.waiters.length;
      while (i > 0 && this.waiters[i - 1]!.atNs > atNs) i--;
      this.waiters.splice(i, 0, { atNs, wake });
      if (this.waiters.length === 1) this.thread.ref();
      this.arm(atNs);
    });
  }

  /** Ends the thread (pending wake-ups are released at once). */
  close(): void {
    Atomics.store(this.control, STOP, 1);
    this.bump();
    for (const w of this.waiters.splice(0)) w.wake();
    void this.thread.terminate();
  }

  // Asks the thread for `atNs` if it is earlier than what it sleeps towards (it never needs to
  // hear of a later one: it wakes the loop at the earlier one, which arms the next).
  private arm(atNs: bigint): void {
    const armed = Atomics.load(this.target, 0);
    if (armed !== 0n && armed <= atNs) return;
    Atomics.store(this.target, 0, atNs);
    this.bump();
  }

  private bump(): void {
    Atomics.add(this.control, GENERATION, 1);
    Atomics.notify(this.control, GENERATION);
  }

  private onTick(): void {
    const now = process.hrtime.bigint();
    let due = 0;
    while (due < this.waiters.length && this.waiters[due]!.atNs <= now) due++;
    const woken = this.waiters.splice(0, due);
    if (this.waiters.length === 0) this.thread.unref();
    else this.arm(this.waiters[0]!.atNs);
    for (const w of woken) w.wake();
  }
}

let shared: Metronome | null | undefined;

/**
 * This thread's metronome, started on first use (the agent starts it as a run is prepared, so it
 * is up by the start instant); null where a thread cannot be started. Until it is up, or without
 * it, a caller yields turn by turn instead: on time, at the price of a busy loop.
 */
export function metronome(): Metronome | null {
  if (shared === undefined) {
    try {
      shared = new Metronome();
    } catch {
      shared = null;
    }
  }
  return shared;
}
