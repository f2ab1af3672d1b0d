// Raw values of many series held in memory as growing Float64Arrays (8 bytes a value, at most
// twice that while an array doubles), summarized exactly by sorting each. Pure; no I/O.
import type { ExactSummary } from './rank-select.js';
import { summarizeSorted } from './rank-select.js';

/** Where raw values go, one series per (class, window, metric). */
export interface ExactSink {
  /** A new, empty series; its id. */
  newSeries(): number;
  add(series: number, value: number): void;
}

/** Every value of every series, in memory. */
export class SeriesValues implements ExactSink {
  /** Values held, over every series. */
  total = 0;
  private arrays: Float64Array[] = [];
  private fills: number[] = [];

  newSeries(): number {
    this.arrays.push(new Float64Array(0));
    this.fills.push(0);
    return this.arrays.length - 1;
  }

  add(series: number, value: number): void {
    let a = this.arrays[series]!;
    const n = this.fills[series]!;
    if (n === a.length) {
      const grown = new Float64Array(Math.max(16, a.length * 2));
      grown.set(a);
      this.arrays[series] = a = grown;
    }
    a[n] = value;
    this.fills[series] = n + 1;
    this.total++;
  }

  /** The values of one series, in the order they came (a view, valid until the next add). */
  values(series: number): Float64Array {
    return this.arrays[series]!.subarray(0, this.fills[series]);
  }

  /** Drops every value (the series ids stay, empty). */
  clear(): void {
    this.arrays = this.arrays.map(() => new Float64Array(0));
    this.fills = this.fills.map(() => 0);
    this.total = 0;
  }

  /** Per series, its exact summary (null without values). Sorts each series in place. */
  summaries(): (ExactSummary | null)[] {
    return this.arrays.map((_, s) => summarizeSorted(this.values(s).sort()));
  }
}
