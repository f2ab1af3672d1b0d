// Exact shares of the global schedule, after k6's execution segments: agent i of N owns the
// segment (i/N, (i+1)/N]; integer quantities split so the per-agent values always sum to the total.
import type { ConcurrencyStep } from './load/model.js';
import type { ClassSchedule } from './schedule.js';

/** An agent's share: index `index` of `count` equal segments. */
export interface Share {
  index: number;
  count: number;
}

/** The share as a fraction string, e.g. "1/8". */
export function shareLabel(share: Share): string {
  return `1/${share.count}`;
}

/** The segment's bounds as exact fraction strings, e.g. ["3/8", "4/8"]. */
export function shareSegment(share: Share): [string, string] {
  return [`${share.index}/${share.count}`, `${share.index + 1}/${share.count}`];
}

// Rotating by the class index spreads each class's first (and remainder) items over different
// agents, so agent 0 is not always the one with an extra request.
function slot(ordinal: number, share: Share, classIndex: number): number {
  return (ordinal + classIndex) % share.count;
}

/** Whether `share` owns item `ordinal` of class `classIndex` (the stripe of equal segments). */
export function ownsOrdinal(ordinal: number, share: Share, classIndex: number): boolean {
  return slot(ordinal, share, classIndex) === share.index;
}

/** This share of an integer total: floor(total/N), plus one for `total mod N` of the agents. */
export function splitInteger(total: number, share: Share, classIndex: number): number {
  const base = Math.floor(total / share.count);
  const extra = total - base * share.count;
  // The rotated positions are a permutation of 0..N-1, so exactly `extra` agents get one more.
  const rotated = (share.index - (classIndex % share.count) + share.count) % share.count;
  return base + (rotated < extra ? 1 : 0);
}

/**
 * Part `part` of `parts` of a share (an agent striping its share over worker threads): the share
 * (i + N·part) of N·parts. The stripes of those parts are exactly share i's stripe of N: arrival
 * k goes to (k + c) mod N·parts, which is ≡ i mod N exactly when (k + c) mod N = i; and the
 * integer split of a concurrency target over the parts sums to share i's split of N.
 */
export function subShare(share: Share, part: number, parts: number): Share {
  return { index: share.index + share.count * part, count: share.count * parts };
}

/** One agent's part of a class: the request indices and intended times it owns, or its concurrency steps. */
export interface ClassStripe {
  className: string;
  closedLoop: boolean;
  requestIndices: number[];
  arrivalsNs: number[];
  concurrency: ConcurrencyStep[];
}

/** Takes `share`'s stripe of one class's global schedule. */
export function takeStripe(cls: ClassSchedule, share: Share, classIndex: number): ClassStripe {
  const requestIndices: number[] = [];
  const arrivalsNs: number[] = [];
  cls.arrivalsNs.forEach((t, i) => {
    if (ownsOrdinal(i, share, classIndex)) {
      requestIndices.push(i);
      arrivalsNs.push(t);
    }
  });
  const concurrency = cls.concurrency.map((s) => ({ atNs: s.atNs, value: splitInteger(s.value, share, classIndex) }));
  return { className: cls.className, closedLoop: cls.closedLoop, requestIndices, arrivalsNs, concurrency };
}
