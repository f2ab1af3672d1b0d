// server-scrapes.csv: one row per scrape attempt (snapshots and interval ticks) with its lag,
// duration and outcome, so every failed or late sample can be found, not only counted.

import type { SourceResult } from '../scrape/types.js';
import { writeFileAtomic } from './atomic.js';
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

/** Writes every scrape of every source, in time order per source. */
export function writeServerScrapesCsv(path: string, sources: readonly SourceResult[]): Promise<void> {
  let text = `${SERVER_SCRAPES_COLUMNS.join(',')}\n`;
  for (const s of sources)
    for (const r of s.records) {
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
      text += `${cells.join(',')}\n`;
    }
  return writeFileAtomic(path, text);
}
