// The waiting queue of one replica, kept sorted by the scheduling policy: FCFS orders by arrival
// (so a preempted request, older than anything still waiting, goes back to the front, as vLLM's
// prepend does); priority orders by priority, then arrival. New arrivals append in O(1).

/** What the queue needs to know of an entry. */
export interface Queued {
  state: string;
  /** Arrival sequence number: the FCFS order and the tie-break. */
  readonly order: number;
  readonly priority: number;
  /** The entry is skipped (not removed) until then. */
  pausedUntilS: number;
}

/** The two scheduling policies. */
export type SchedulingPolicy = 'fcfs' | 'priority';

/** Whether `a` is scheduled before `b` under `policy`. */
export function runsBefore(policy: SchedulingPolicy, a: Queued, b: Queued): boolean {
  if (policy === 'priority' && a.priority !== b.priority) return a.priority > b.priority;
  return a.order < b.order;
}

/** A sorted queue of entries whose `state` is 'waiting'; others are dropped lazily. */
export class WaitingQueue<T extends Queued> {
  private items: T[] = [];
  private head = 0;

  constructor(private readonly policy: SchedulingPolicy) {}

  /** Inserts `entry` at its place. */
  push(entry: T): void {
    const last = this.items.at(-1);
    if (this.items.length === this.head || !last || !runsBefore(this.policy, entry, last)) {
      this.items.push(entry);
      return;
    }
    let lo = this.head;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (runsBefore(this.policy, this.items[mid]!, entry)) lo = mid + 1;
      else hi = mid;
    }
    this.items.splice(lo, 0, entry);
  }

  /** The first waiting entry not paused at `nowS`, without removing it. */
  peek(nowS: number): T | undefined {
    this.dropDeadHead();
    for (let i = this.head; i < this.items.length; i++) {
      const entry = this.items[i]!;
      if (entry.state === 'waiting' && entry.pausedUntilS <= nowS) return entry;
    }
    return undefined;
  }

  /** Removes `entry`, which peek() just returned. */
  remove(entry: T): void {
    if (this.items[this.head] === entry) this.head += 1;
    else this.items.splice(this.items.indexOf(entry, this.head), 1);
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }

  /** Every entry still waiting, in order. */
  *entries(): IterableIterator<T> {
    for (let i = this.head; i < this.items.length; i++) if (this.items[i]!.state === 'waiting') yield this.items[i]!;
  }

  private dropDeadHead(): void {
    while (this.head < this.items.length && this.items[this.head]!.state !== 'waiting') this.head += 1;
  }
}
