// Values grouped by (key, second) — an agent's schedule lags, a class's TTFTs — for the report's
// exact per-second percentiles over a whole requests.ndjson, in bounded memory. Up to a bound the
// values are held in memory (12 bytes each: the value and its group); past it they go to a spill
// file (the same 12 bytes), and the groups are sorted a window at a time: consecutive groups whose
// values fit the bound, one sequential read of the file each. Memory is a block to start with, doubled
// as values come, up to the bound. A 10M-request run held every value
// in a number array per group before (~40 bytes a request for both series, ~400 MB at the end of
// the run); now at most the bound, whatever the run's length. Exact either way: the same values,
// each group sorted whole.
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Values held in memory before they spill: 1 Mi values (12 MiB with their groups, 20 MiB while sorting). */
export const DEFAULT_VALUES_IN_MEMORY = 1 << 20;

/** Values per spill block: the values, then their group ids. */
const BLOCK = 1 << 16;
const BLOCK_BYTES = BLOCK * 12;

let spills = 0;

/** Values of many (key, second) groups; each group handed over once, sorted, by forEachGroup. */
export class GroupedValues {
  /** (key, second) → group id. */
  private readonly ids = new Map<number, number>();
  private readonly keys: number[] = [];
  private readonly seconds: number[] = [];
  private readonly counts: number[] = [];
  /** The values held and their groups: a block to start with, doubled up to the bound (a multiple of a block). */
  private values = new Float64Array(BLOCK);
  private groups = new Uint32Array(BLOCK);
  private readonly capacity: number;
  private fill = 0;
  private spill: { path: string; fd: number } | null = null;

  constructor(maxInMemory = DEFAULT_VALUES_IN_MEMORY) {
    this.capacity = Math.max(BLOCK, Math.ceil(maxInMemory / BLOCK) * BLOCK);
  }

  /** Adds `value` to the group of `key` (a small non-negative integer) and `second` (any integer second). */
  add(key: number, second: number, value: number): void {
    const composite = key * 2 ** 32 + (second + 2 ** 31);
    let g = this.ids.get(composite);
    if (g === undefined) {
      g = this.keys.length;
      this.ids.set(composite, g);
      this.keys.push(key);
      this.seconds.push(second);
      this.counts.push(0);
    }
    this.counts[g]!++;
    if (this.fill === this.values.length) this.grow();
    this.values[this.fill] = value;
    this.groups[this.fill++] = g;
    if (this.fill === this.capacity || (this.spill !== null && this.fill === BLOCK)) this.flush();
  }

  private grow(): void {
    const n = Math.min(this.capacity, this.values.length * 2);
    const values = new Float64Array(n);
    values.set(this.values);
    const groups = new Uint32Array(n);
    groups.set(this.groups);
    this.values = values;
    this.groups = groups;
  }

  /** Whether the values went to a spill file. */
  get spilled(): boolean {
    return this.spill !== null;
  }

  /** Calls `each` once per group (in no particular order) with its values sorted ascending; call once, after the last add. */
  forEachGroup(each: (key: number, second: number, sorted: Float64Array) => void): void {
    if (this.spill === null) {
      this.sortWindow(0, this.keys.length, each, (visit) => {
        for (let i = 0; i < this.fill; i++) visit(this.groups[i]!, this.values[i]!);
      });
      return;
    }
    try {
      this.flush();
      for (let first = 0; first < this.keys.length; ) {
        let end = first;
        let total = 0;
        // Consecutive groups while they fit the bound (a group larger than the bound alone).
        while (end < this.keys.length && (end === first || total + this.counts[end]! <= this.capacity)) total += this.counts[end++]!;
        this.sortWindow(first, end, each, (visit) => this.scan(visit));
        first = end;
      }
    } finally {
      closeSync(this.spill.fd);
      rmSync(this.spill.path, { force: true });
    }
  }

  // Groups [first, end): their values placed contiguously by group, each group sorted and handed over.
  private sortWindow(
    first: number,
    end: number,
    each: (key: number, second: number, sorted: Float64Array) => void,
    read: (visit: (group: number, value: number) => void) => void,
  ): void {
    const starts = new Float64Array(end - first + 1);
    for (let g = first; g < end; g++) starts[g - first + 1] = starts[g - first]! + this.counts[g]!;
    const out = new Float64Array(starts[end - first]!);
    const next = starts.slice(0, end - first);
    read((g, v) => {
      if (g >= first && g < end) out[next[g - first]!++] = v;
    });
    for (let g = first; g < end; g++)
      each(this.keys[g]!, this.seconds[g]!, out.subarray(starts[g - first]!, starts[g - first + 1]!).sort());
  }

  // Memory full (or, once spilling, a block full): what it holds goes to the file.
  private flush(): void {
    if (this.spill === null) {
      const path = join(tmpdir(), `loadfleet-report-values-${process.pid}-${spills++}.tmp`);
      this.spill = { path, fd: openSync(path, 'w+') };
    }
    for (let at = 0; at < this.fill; at += BLOCK) {
      const n = Math.min(BLOCK, this.fill - at);
      const block = new Uint8Array(BLOCK_BYTES);
      new Float64Array(block.buffer, 0, n).set(this.values.subarray(at, at + n));
      new Uint32Array(block.buffer, BLOCK * 8, n).set(this.groups.subarray(at, at + n));
      writeSync(this.spill.fd, block, 0, at + n === this.fill && n < BLOCK ? BLOCK * 8 + n * 4 : BLOCK_BYTES);
    }
    this.fill = 0;
  }

  // Every spilled value, a block at a time, in the order written.
  private scan(visit: (group: number, value: number) => void): void {
    const block = new Uint8Array(BLOCK_BYTES);
    const values = new Float64Array(block.buffer, 0, BLOCK);
    const groups = new Uint32Array(block.buffer, BLOCK * 8, BLOCK);
    for (let pos = 0; ; ) {
      const read = readSync(this.spill!.fd, block, 0, BLOCK_BYTES, pos);
      if (read === 0) return;
      pos += read;
      // A full block, or the last one: its values, then its groups (n of each).
      const n = read === BLOCK_BYTES ? BLOCK : (read - BLOCK * 8) / 4;
      for (let i = 0; i < n; i++) visit(groups[i]!, values[i]!);
    }
  }
}
