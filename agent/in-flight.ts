// The requests in flight under one stop signal, ended by ONE abort listener and ONE timer per
// timeout length instead of a listener and a timer each. A listener per request made every start
// O(open streams) (an EventTarget compares each new listener with all it holds: 1.3 s of CPU while
// 10,000 streams started) and a Timeout per request is ~0.2 KiB an open stream keeps. Requests
// with the same timeout length reach their deadlines in the order they started, so each group is
// a Set in insertion order, and its timer only ever waits for the oldest one still open.

/** A request the registry can end: its own abort, and the deadline it was given. */
export interface Abortable {
  abort(status: 'aborted' | 'timeout', why: string): void;
  /** performance.now() ms by which it must have ended. */
  readonly deadlineMs: number;
  readonly timeoutMs: number;
}

// The requests of one timeout length, oldest first.
class Group {
  readonly items = new Set<Abortable>();
  private timer: NodeJS.Timeout | undefined;

  add(item: Abortable): void {
    this.items.add(item);
    if (this.timer === undefined) this.arm(item.deadlineMs);
  }

  delete(item: Abortable): void {
    this.items.delete(item);
    // Nothing left to time out: no timer outlives the requests (a process may be waiting to exit).
    if (this.items.size === 0) this.stop();
  }

  abortAll(): void {
    this.stop();
    for (const item of [...this.items]) item.abort('aborted', 'run stopped');
    this.items.clear();
  }

  private stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(atMs: number): void {
    this.timer = setTimeout(this.fire, Math.max(0, atMs - performance.now()));
  }

  // Ends every request past its deadline, then waits for the oldest one left (if any).
  private readonly fire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    for (const item of this.items) {
      if (item.deadlineMs > now) {
        this.arm(item.deadlineMs);
        return;
      }
      this.items.delete(item);
      item.abort('timeout', `no end of stream within ${item.timeoutMs} ms`);
    }
  };
}

/** The requests in flight under one signal, by timeout length. */
class InFlight {
  private readonly groups = new Map<number, Group>();

  constructor(signal: AbortSignal) {
    signal.addEventListener('abort', () => this.abortAll(), { once: true });
  }

  add(item: Abortable): void {
    let group = this.groups.get(item.timeoutMs);
    if (!group) {
      group = new Group();
      this.groups.set(item.timeoutMs, group);
    }
    group.add(item);
  }

  delete(item: Abortable): void {
    this.groups.get(item.timeoutMs)?.delete(item);
  }

  private abortAll(): void {
    for (const group of this.groups.values()) group.abortAll();
  }
}

const bySignal = new WeakMap<AbortSignal, InFlight>();

/** Watches `item` until `unwatch`: aborted when `signal` fires, timed out at its deadline. */
export function watch(signal: AbortSignal, item: Abortable): void {
  let inFlight = bySignal.get(signal);
  if (!inFlight) {
    inFlight = new InFlight(signal);
    bySignal.set(signal, inFlight);
  }
  inFlight.add(item);
}

/** Stops watching `item` (it ended). */
export function unwatch(signal: AbortSignal, item: Abortable): void {
  bySignal.get(signal)?.delete(item);
}
