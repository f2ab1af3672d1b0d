// The coordinator's raw metric values, for the exact figures of run.json, in bounded memory: up to
// a bound they are held in memory and each series is sorted at the end; past it every value goes
// to a spill file beside the run's artifacts (binary, 12 bytes a value) and the same figures come
// from a streamed selection over it (rank-select.ts), a few sequential passes. The file is removed
// once the figures are known. Exact either way: the same values, the same nearest ranks.
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { ExactSummary } from '../figures/exact/rank-select.js';
import { RankSelection } from '../figures/exact/rank-select.js';
import type { ExactSink } from '../figures/exact/series-values.js';
import { SeriesValues } from '../figures/exact/series-values.js';

/** Values held in memory before they spill: 4 Mi values, 32 MiB (64 MiB while an array doubles). */
export const DEFAULT_MAX_IN_MEMORY = 1 << 22;

/** Overrides the in-memory bound (tests only: it makes a small run take the spill path). */
export const MAX_IN_MEMORY_ENV = 'LOADFLEET_EXACT_IN_MEMORY_VALUES';

/** Values per spill block: a block is an 8-byte header (the fill), the values, then their series ids. */
const BLOCK = 1 << 16;
const BLOCK_BYTES = 8 + BLOCK * 8 + BLOCK * 4;

/** The in-memory bound in force: the environment's override, else the default. */
export function maxInMemoryValues(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env[MAX_IN_MEMORY_ENV]);
  return env[MAX_IN_MEMORY_ENV] !== undefined && Number.isInteger(v) && v >= 0 ? v : DEFAULT_MAX_IN_MEMORY;
}

/** One spill block's buffer and its typed views. */
class Block {
  readonly bytes = new Uint8Array(BLOCK_BYTES);
  readonly header = new Uint32Array(this.bytes.buffer, 0, 2);
  readonly values = new Float64Array(this.bytes.buffer, 8, BLOCK);
  readonly series = new Uint32Array(this.bytes.buffer, 8 + BLOCK * 8, BLOCK);
}

/** How the exact figures were computed, for run.json. */
export interface ExactMethod {
  /** Raw values over every series. */
  values: number;
  method: 'in-memory sort' | 'streamed selection';
  /** Passes over the spill file (0 in memory). */
  passes: number;
}

/** Raw values of many series, in memory up to a bound and in a spill file past it. */
export class ExactStore implements ExactSink {
  private readonly memory = new SeriesValues();
  private readonly counts: number[] = [];
  private fd: number | null = null;
  private readonly block = new Block();
  private fill = 0;
  private passes = 0;

  constructor(
    private readonly spillPath: string,
    private readonly maxInMemory = maxInMemoryValues(),
  ) {}

  newSeries(): number {
    this.counts.push(0);
    return this.memory.newSeries();
  }

  add(series: number, value: number): void {
    this.counts[series]!++;
    if (this.fd !== null) this.spill(series, value);
    else {
      this.memory.add(series, value);
      if (this.memory.total > this.maxInMemory) this.spillAll();
    }
  }

  /** How the figures are (or will be) computed. */
  method(): ExactMethod {
    const values = this.counts.reduce((a, b) => a + b, 0);
    return { values, method: this.fd === null ? 'in-memory sort' : 'streamed selection', passes: this.passes };
  }

  /** Per series, its exact summary (null without values); removes the spill file. Call once, after the last add. */
  async summaries(): Promise<(ExactSummary | null)[]> {
    if (this.fd === null) return this.memory.summaries();
    try {
      this.flush();
      closeSync(this.fd);
      const sel = new RankSelection(this.counts);
      while (!sel.done) {
        sel.startPass();
        await this.scan(sel);
        sel.finishPass();
      }
      this.passes = sel.passes;
      return sel.summaries();
    } finally {
      rmSync(this.spillPath, { force: true });
    }
  }

  // Past the bound: what memory holds goes to the file first, then every value as it comes.
  private spillAll(): void {
    this.fd = openSync(this.spillPath, 'w');
    for (let s = 0; s < this.counts.length; s++) for (const v of this.memory.values(s)) this.spill(s, v);
    this.memory.clear();
  }

  private spill(series: number, value: number): void {
    this.block.values[this.fill] = value;
    this.block.series[this.fill] = series;
    if (++this.fill === BLOCK) this.flush();
  }

  private flush(): void {
    if (this.fill === 0) return;
    this.block.header[0] = this.fill;
    writeSync(this.fd!, this.block.bytes);
    this.fill = 0;
  }

  // One pass: every value of the file shown to the selection, a block at a time.
  private async scan(sel: RankSelection): Promise<void> {
    const file = await open(this.spillPath, 'r');
    const b = new Block();
    try {
      for (let pos = 0; ; pos += BLOCK_BYTES) {
        const { bytesRead } = await file.read(b.bytes, 0, BLOCK_BYTES, pos);
        if (bytesRead === 0) return;
        if (bytesRead !== BLOCK_BYTES) throw new Error(`${this.spillPath}: a short block (${bytesRead} bytes)`);
        const n = b.header[0]!;
        for (let i = 0; i < n; i++) sel.visit(b.series[i]!, b.values[i]!);
      }
    } finally {
      await file.close();
    }
  }
}
