// server-scrapes.csv: one row per scrape attempt (snapshots and interval ticks) with its lag,
// duration and outcome, so every failed or late sample can be found, not only counted. Rows are
// grouped by source; the stream keeps each source's rows in its own part file as they arrive and
// joins them on close, so nothing of a long run is held in memory.
import { createReadStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import type { ScrapeRecord, SourceResult } from '../../figures/server/types.js';
import { AtomicLineStream, writeFileAtomic } from '../../shared/atomic-file.js';
import { csvField } from './server-metrics-csv.js';

/** The header line's columns. */
export const SERVER_SCRAPES_COLUMNS = [
  'source',
  'kind',
  'tick',
  'elapsed_s',
  'unix_ns',
  'lag_ms',
  'duration_ms',
  'http_status',
  'error_kind',
  'error',
];

/** Writes every scrape of every source, in time order per source (all records held: the reference for the stream). */
export function writeServerScrapesCsv(path: string, sources: readonly SourceResult[]): Promise<void> {
  let text = `${SERVER_SCRAPES_COLUMNS.join(',')}\n`;
  for (const s of sources) for (const r of s.records) text += scrapeRow(r);
  return writeFileAtomic(path, text);
}

/** One scrape's line. */
export function scrapeRow(r: ScrapeRecord): string {
  const cells = [
    csvField(r.source),
    r.kind,
    r.tick ?? '',
    r.elapsedS.toFixed(3),
    String(r.startUnixNs),
    r.lagMs ?? '',
    r.durationMs,
    r.httpStatus ?? '',
    r.error?.kind ?? '',
    csvField(r.error?.message ?? ''),
  ];
  return `${cells.join(',')}\n`;
}

/** server-scrapes.csv written as scrapes arrive: one part file per source, joined in source order on close. */
export class ServerScrapesCsvStream {
  private readonly parts: AtomicLineStream[];
  private readonly partPaths: string[];

  constructor(
    private readonly path: string,
    sources: number,
  ) {
    this.partPaths = Array.from({ length: sources }, (_, i) => `${path}.part${i}`);
    this.parts = this.partPaths.map((p) => new AtomicLineStream(p));
  }

  /** Appends one scrape of source `i`. */
  row(i: number, r: ScrapeRecord): void {
    this.parts[i]!.write(scrapeRow(r));
  }

  /** Closes the parts, joins them after the header into `path` (atomically) and removes them. */
  async close(): Promise<void> {
    await Promise.all(this.parts.map((p) => p.close()));
    const out = new AtomicLineStream(this.path);
    out.write(`${SERVER_SCRAPES_COLUMNS.join(',')}\n`);
    for (const p of this.partPaths) {
      for await (const chunk of createReadStream(p, 'utf8')) out.write(chunk as string);
      await unlink(p);
    }
    await out.close();
  }
}
