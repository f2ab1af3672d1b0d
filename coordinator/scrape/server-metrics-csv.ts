// server-metrics.csv: every interval scrape in long format, one row per series
// (`elapsed_s,unix_ns,source,metric,labels_json,value`), so a reader can replot any server signal
// against the client's view without the run's scraper. Only the serving stack's families are kept
// (names.ts keptInCsv) so the file stays proportional to what the analysis reads.

import { keptInCsv } from '../../figures/server/names.js';
import type { PromSample } from '../../figures/server/prom-parse.js';
import { AtomicLineStream } from '../../shared/atomic-file.js';

/** The header line's columns. */
export const SERVER_METRICS_COLUMNS = ['elapsed_s', 'unix_ns', 'source', 'metric', 'labels_json', 'value'];

/** Streams rows as scrapes arrive; renamed into place on close. */
export class ServerMetricsCsvWriter {
  private readonly out: AtomicLineStream;
  rows = 0;

  constructor(path: string) {
    this.out = new AtomicLineStream(path);
    this.out.write(`${SERVER_METRICS_COLUMNS.join(',')}\n`);
  }

  /** Appends the kept series of one good scrape. */
  scrape(elapsedS: number, unixNs: bigint, source: string, series: readonly PromSample[]): void {
    let text = '';
    const head = `${elapsedS.toFixed(3)},${unixNs},${csvField(source)},`;
    for (const s of series) {
      if (!keptInCsv(s.name)) continue;
      text += `${head}${csvField(s.name)},${csvField(labelsJson(s.labels))},${formatValue(s.value)}\n`;
      this.rows++;
    }
    this.out.write(text);
  }

  /** Closes and renames into place. */
  close(): Promise<void> {
    return this.out.close();
  }
}

/** Labels as a JSON object with sorted keys, so one series always reads the same. */
export function labelsJson(labels: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/** A value as the exposition format spells it (NaN, +Inf, -Inf). */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

/** RFC 4180 quoting where a field needs it. */
export function csvField(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
