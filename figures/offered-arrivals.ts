// The open-loop arrivals the agents dispatched, per class, kept in bits: one bit per request_index
// that was dispatched at exactly its planned time (the plan's arrival, which the global schedule
// already holds), and the intended time itself only for requests dispatched at another time. A run
// that keeps its schedule therefore costs an eighth of a byte per request here instead of a number
// (8 bytes in a packed array, more in a holey one). The times off the plan are kept up to a bound
// per class, so a run whose agents follow some other schedule cannot grow the coordinator without
// limit either: past the bound the offered hash is unknown (null), while whether it matches the
// plan stays exact (it does not).
import type { IntSequence } from '../shared/schedule.js';
import { IndexSet } from './index-set.js';

/** Intended times off the plan kept per class before the offered hash is given up (a few MB). */
export const MAX_OFF_PLAN = 65_536;

/** One open-loop class's dispatched arrivals, as offsets from the start (aligned with the global schedule). */
export class OfferedArrivals {
  /** Indices whose last dispatch was at the planned time. */
  private readonly onPlan = new IndexSet();
  /** Index → intended time, for indices whose last dispatch was at another time. */
  private readonly offPlan = new Map<number, number>();
  /** Off-plan dispatches not kept (past the bound): the hash cannot be recomputed. */
  private dropped = 0;
  /** One more than the largest index dispatched. */
  private end = 0;

  constructor(
    private readonly planned: ArrayLike<number>,
    private readonly maxOffPlan = MAX_OFF_PLAN,
  ) {}

  /** Request `index` was dispatched for `intendedNs`; a later report of the same index replaces it. */
  add(index: number, intendedNs: number): void {
    if (index + 1 > this.end) this.end = index + 1;
    if (intendedNs === this.planned[index]) {
      this.onPlan.add(index);
      this.offPlan.delete(index);
      return;
    }
    this.onPlan.delete(index);
    if (this.offPlan.has(index) || this.offPlan.size < this.maxOffPlan) this.offPlan.set(index, intendedNs);
    else this.dropped++;
  }

  /** Whether every planned arrival was dispatched, each at its planned time, and nothing else. */
  matchesPlan(): boolean {
    return this.end === this.planned.length && this.onPlan.size === this.planned.length;
  }

  /**
   * The dispatched arrivals by index (−1 where an index below the largest was never dispatched), or
   * null when more than the bound of them were off the plan and were not all kept.
   */
  sequence(): IntSequence | null {
    if (this.dropped > 0) return null;
    return {
      length: this.end,
      at: (i) => (this.onPlan.has(i) ? this.planned[i]! : (this.offPlan.get(i) ?? -1)),
    };
  }

  /** Bytes held beyond the plan's own arrays (the bitset; about 40 per off-plan entry). */
  get bytes(): number {
    return this.onPlan.bytes + this.offPlan.size * 40;
  }
}
