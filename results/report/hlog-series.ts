// Per-class percentiles over time from histograms.hlog (an HdrHistogram V2 interval log, as
// coordinator/file-writers/hlog.ts writes it): each tagged 1 s interval histogram is decoded and read
// with the product's own nearest-rank code, so a chart shows exactly what run.json would compute.
import { decodeHistogram, percentilesNs } from '../../shared/histogram.js';

/** Percentiles of one metric in one interval. */
export interface IntervalPercentiles {
  /** Interval start, seconds since the log's base time. */
  startS: number;
  lengthS: number;
  count: number;
  /** The requested percentiles in ms, in the order asked for. */
  valuesMs: number[];
}

/** The log's header times, seconds since the epoch (null when the line is missing). */
export interface HlogHeader {
  baseTimeS: number | null;
  startTimeS: number | null;
}

/** Reads `#[BaseTime: …]` and `#[StartTime: …]`. */
export function hlogHeader(text: string): HlogHeader {
  const base = /^#\[BaseTime: ([\d.]+)/m.exec(text);
  const start = /^#\[StartTime: ([\d.]+)/m.exec(text);
  return { baseTimeS: base ? Number(base[1]) : null, startTimeS: start ? Number(start[1]) : null };
}

/**
 * For every tag `<class>/<metric>` with the given metric: its intervals in time order with the
 * percentiles `quantiles` (e.g. [0.5, 0.95]). Empty histograms are skipped.
 */
export function metricIntervals(text: string, metric: string, quantiles: readonly number[]): Map<string, IntervalPercentiles[]> {
  const header = hlogHeader(text);
  // Without a BaseTime line, timestamps are absolute (the HdrHistogram log convention).
  const absoluteOffset = header.baseTimeS === null ? (header.startTimeS ?? 0) : 0;
  const out = new Map<string, IntervalPercentiles[]>();
  const suffix = `/${metric}`;
  for (const line of text.split('\n')) {
    if (!line.startsWith('Tag=')) continue;
    const fields = line.split(',');
    const tag = fields[0]!.slice(4);
    if (!tag.endsWith(suffix) || fields.length < 5) continue;
    const h = decodeHistogram(fields[4]!.trim());
    if (h.totalCount === 0) continue;
    const cls = tag.slice(0, -suffix.length);
    const list = out.get(cls) ?? [];
    list.push({
      startS: Number(fields[1]) - absoluteOffset,
      lengthS: Number(fields[2]),
      count: h.totalCount,
      valuesMs: percentilesNs(h, quantiles).map((ns) => ns / 1e6),
    });
    out.set(cls, list);
  }
  for (const list of out.values()) list.sort((a, b) => a.startS - b.startS);
  return out;
}
