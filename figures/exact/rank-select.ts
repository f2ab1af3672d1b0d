// Exact nearest-rank figures of many series of float64 values, in memory or without holding them.
// Pure: no I/O. In memory, a series is sorted whole (summarizeSorted). Streamed, a RankSelection is
// shown every value once per pass, in any order (from a file, say), and finds the same figures with
// memory bounded by the number of series and ranks, never by the number of values:
//
// Every double maps to a 64-bit key whose unsigned order is Float64Array.sort's order (−0 before +0).
// A pass either collects the values of a rank's key range, when the ranges of the pass fit the
// collect budget together, and sorts them, or counts the range's values by the next 12 or 13 key
// bits to narrow the range to the one digit holding the rank. Five counting passes leave one key,
// one value; in practice one count and one collect pass suffice. Figures are never estimated.
import { nearestRankIndex, REPORTED_QUANTILES } from '../../shared/histogram.js';
import { boundQuantiles } from '../../shared/slo-bounds.js';

/**
 * The quantiles an exact summary holds, ascending: run.json's (p50, p90, p95, p99, also the
 * schedule lag gate's) and every quantile the SLO table's bounds judge.
 */
export const EXACT_QUANTILES: readonly number[] = [...new Set([...REPORTED_QUANTILES, ...boundQuantiles()])].sort((a, b) => a - b);

/** Exact nearest-rank figures of one series of raw values. */
export interface ExactSummary {
  count: number;
  min: number;
  max: number;
  /** The nearest-rank value at each of EXACT_QUANTILES, in that order. */
  quantiles: number[];
}

/** The nearest-rank q-quantile of a summary; q must be one of EXACT_QUANTILES. */
export function exactQuantile(s: ExactSummary, q: number): number {
  const i = EXACT_QUANTILES.indexOf(q);
  if (i < 0) throw new RangeError(`an exact summary holds the quantiles ${EXACT_QUANTILES.join(', ')}, not ${q}`);
  return s.quantiles[i]!;
}

/** The 0-based ranks a summary of n > 0 values reads, in order: min, each of EXACT_QUANTILES, max. */
export function summaryRanks(n: number): number[] {
  return [0, ...EXACT_QUANTILES.map((q) => nearestRankIndex(n, q)), n - 1];
}

function fromRanks(count: number, values: readonly number[]): ExactSummary {
  return { count, min: values[0]!, max: values[values.length - 1]!, quantiles: values.slice(1, -1) };
}

/** The summary of values sorted ascending as Float64Array.sort orders them; null when there are none. */
export function summarizeSorted(sorted: ArrayLike<number>): ExactSummary | null {
  if (sorted.length === 0) return null;
  return fromRanks(
    sorted.length,
    summaryRanks(sorted.length).map((r) => sorted[r]!),
  );
}

// ---- order keys

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);
const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const HI = LITTLE ? 1 : 0;
const LO = LITTLE ? 0 : 1;

/** The order key of v as its high and low unsigned 32-bit halves: flip every bit of a negative, the sign of the rest. */
export function orderKey(v: number): [number, number] {
  F64[0] = v;
  const hi = U32[HI]!;
  const lo = U32[LO]!;
  return hi >>> 31 ? [~hi >>> 0, ~lo >>> 0] : [(hi ^ 0x80000000) >>> 0, lo];
}

/** The double whose order key is (hi, lo). */
export function keyValue(hi: number, lo: number): number {
  if (hi >>> 31) {
    U32[HI] = (hi ^ 0x80000000) >>> 0;
    U32[LO] = lo;
  } else {
    U32[HI] = ~hi >>> 0;
    U32[LO] = ~lo >>> 0;
  }
  return F64[0]!;
}

/** Key bits counted at each level, from the top: sign and exponent first, then the mantissa 13 bits at a time. */
const WIDTHS = [12, 13, 13, 13, 13] as const;
/** The lowest key bit of each level's digit (64 at the top). */
const STARTS = WIDTHS.map((_, l) => 64 - WIDTHS.slice(0, l + 1).reduce((a, b) => a + b, 0));

/** The digit of key (hi, lo) at `level`: its bits [STARTS[level], STARTS[level] + width). */
export function keyDigit(hi: number, lo: number, level: number): number {
  const start = STARTS[level]!;
  const mask = (1 << WIDTHS[level]!) - 1;
  if (start >= 32) return (hi >>> (start - 32)) & mask;
  if (start === 0) return lo & mask;
  return ((hi << (32 - start)) | (lo >>> start)) & mask;
}

/** The (hi, lo) masks of the key bits above `level`'s digit: the bits a range at that level has fixed. */
function fixedMask(level: number): [number, number] {
  const end = level === 0 ? 64 : STARTS[level - 1]!;
  if (end >= 64) return [0, 0];
  if (end >= 32) return [(~0 << (end - 32)) >>> 0, 0];
  return [0xffffffff, end === 0 ? 0xffffffff : (~0 << end) >>> 0];
}

/** (hi, lo) with `digit` placed at `level`. */
function withDigit(hi: number, lo: number, level: number, digit: number): [number, number] {
  const start = STARTS[level]!;
  if (start >= 32) return [(hi | (digit << (start - 32))) >>> 0, lo];
  if (start === 0) return [hi, (lo | digit) >>> 0];
  return [(hi | (digit >>> (32 - start))) >>> 0, (lo | (digit << start)) >>> 0];
}

// ---- streamed selection

/** Values a pass may collect into memory across all its ranges (8 bytes each): 16 MiB. */
export const DEFAULT_COLLECT_BUDGET = 1 << 21;

/** A key range of one series holding some of its wanted ranks. */
interface Range {
  /** The level whose digit the range counts next; the bits above it are fixed to (hi, lo). */
  level: number;
  hi: number;
  lo: number;
  maskHi: number;
  maskLo: number;
  /** Values of the series with a smaller key, and in the range. */
  below: number;
  count: number;
  /** Ranks of the series inside the range (below ≤ rank < below + count). */
  ranks: number[];
  /** This pass: the values collected, or the counts by digit. */
  collected: Float64Array | undefined;
  filled: number;
  counts: Uint32Array | undefined;
}

/**
 * Finds min, EXACT_QUANTILES and max of every series from passes over their values. Each pass:
 * startPass(), visit() every value of every series once, finishPass(); until done.
 */
export class RankSelection {
  /** Passes started so far. */
  passes = 0;
  private readonly ranges: Range[][];
  /** Series → rank → value, as ranks resolve. */
  private readonly found: Map<number, number>[];
  private readonly counts: readonly number[];

  /** `counts[s]` is the number of values series s will show in every pass. */
  constructor(
    counts: readonly number[],
    private readonly collectBudget = DEFAULT_COLLECT_BUDGET,
  ) {
    this.counts = [...counts];
    this.found = counts.map(() => new Map());
    this.ranges = counts.map((n) => (n === 0 ? [] : [range(0, 0, 0, 0, n, [...new Set(summaryRanks(n))])]));
  }

  /** Whether every rank of every series is known. */
  get done(): boolean {
    return this.ranges.every((r) => r.length === 0);
  }

  /** Decides which ranges collect (the smallest first, within the budget) and which count. */
  startPass(): void {
    this.passes++;
    let budget = this.collectBudget;
    const all = this.ranges.flat().sort((a, b) => a.count - b.count);
    for (const r of all) {
      r.filled = 0;
      if (r.count <= budget) {
        budget -= r.count;
        r.collected = new Float64Array(r.count);
        r.counts = undefined;
      } else {
        r.collected = undefined;
        r.counts = new Uint32Array(1 << WIDTHS[r.level]!);
      }
    }
  }

  /** One value of series `series`. */
  visit(series: number, value: number): void {
    const ranges = this.ranges[series]!;
    if (ranges.length === 0) return;
    F64[0] = value;
    let hi = U32[HI]!;
    let lo = U32[LO]!;
    if (hi >>> 31) {
      hi = ~hi >>> 0;
      lo = ~lo >>> 0;
    } else hi = (hi ^ 0x80000000) >>> 0;
    for (const r of ranges) {
      if ((hi & r.maskHi) >>> 0 !== r.hi || (lo & r.maskLo) >>> 0 !== r.lo) continue;
      if (r.collected) r.collected[r.filled++] = value;
      else r.counts![keyDigit(hi, lo, r.level)]!++;
      break; // a series's ranges are disjoint
    }
  }

  /** Resolves what the pass settled and narrows the rest. Throws when the pass did not show the values announced. */
  finishPass(): void {
    this.ranges.forEach((ranges, s) => {
      const next: Range[] = [];
      for (const r of ranges) {
        if (r.collected) {
          if (r.filled !== r.count) throw new Error(`series ${s}: a pass showed ${r.filled} values in a range of ${r.count}`);
          r.collected.sort();
          for (const k of r.ranks) this.found[s]!.set(k, r.collected[k - r.below]!);
        } else next.push(...this.narrow(s, r));
      }
      this.ranges[s] = next;
    });
  }

  /** Per series, its summary (null for a series without values); only once done. */
  summaries(): (ExactSummary | null)[] {
    if (!this.done) throw new Error('the selection is not done');
    return this.counts.map((n, s) =>
      n === 0
        ? null
        : fromRanks(
            n,
            summaryRanks(n).map((k) => this.found[s]!.get(k)!),
          ),
    );
  }

  // The digits holding the range's ranks become narrower ranges, or values once every bit is fixed.
  private narrow(s: number, r: Range): Range[] {
    const out: Range[] = [];
    const ranks = [...r.ranks].sort((a, b) => a - b);
    let below = r.below;
    let i = 0;
    const counts = r.counts!;
    const total = counts.reduce((a, b) => a + b, 0);
    if (total !== r.count) throw new Error(`series ${s}: a pass counted ${total} values in a range of ${r.count}`);
    for (let d = 0; d < counts.length && i < ranks.length; d++) {
      const c = counts[d]!;
      if (c === 0) continue;
      const inside: number[] = [];
      while (i < ranks.length && ranks[i]! < below + c) inside.push(ranks[i++]!);
      if (inside.length > 0) {
        const [hi, lo] = withDigit(r.hi, r.lo, r.level, d);
        if (r.level + 1 === WIDTHS.length) for (const k of inside) this.found[s]!.set(k, keyValue(hi, lo));
        else out.push(range(r.level + 1, hi, lo, below, c, inside));
      }
      below += c;
    }
    return out;
  }
}

function range(level: number, hi: number, lo: number, below: number, count: number, ranks: number[]): Range {
  const [maskHi, maskLo] = fixedMask(level);
  return { level, hi, lo, maskHi, maskLo, below, count, ranks, collected: undefined, filled: 0, counts: undefined };
}
