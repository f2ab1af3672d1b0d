// The Prometheus text exposition format (version 0.0.4), written from plain metric families, and
// the conversion of an HDR histogram (ns) into a Prometheus histogram (cumulative buckets, s).
import type { Histogram } from '../../shared/histogram.js';

/** The Content-Type of what writeExposition returns. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Label name → value. */
export type Labels = Readonly<Record<string, string>>;

/** A Prometheus histogram series: cumulative counts per upper bound, plus sum and count. */
export interface HistogramSeries {
  labels: Labels;
  /** Ascending upper bounds with the cumulative count of observations ≤ each; +Inf is added on writing. */
  buckets: readonly { le: number; count: number }[];
  sum: number;
  count: number;
}

/** One metric family: name, one-sentence HELP, type, and its series. */
export type MetricFamily =
  | { name: string; help: string; type: 'counter' | 'gauge'; samples: readonly { labels: Labels; value: number }[] }
  | { name: string; help: string; type: 'histogram'; series: readonly HistogramSeries[] };

/** Writes families in the text format: HELP and TYPE lines, then every sample. */
export function writeExposition(families: readonly MetricFamily[]): string {
  let out = '';
  for (const f of families) {
    out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    if (f.type !== 'histogram') {
      for (const s of f.samples) out += sampleLine(f.name, s.labels, s.value);
      continue;
    }
    for (const s of f.series) {
      for (const b of s.buckets) out += sampleLine(`${f.name}_bucket`, { ...s.labels, le: formatValue(b.le) }, b.count);
      out += sampleLine(`${f.name}_bucket`, { ...s.labels, le: '+Inf' }, s.count);
      out += sampleLine(`${f.name}_sum`, s.labels, s.sum);
      out += sampleLine(`${f.name}_count`, s.labels, s.count);
    }
  }
  return out;
}

/**
 * A Prometheus histogram (seconds) from an HDR histogram of ns values: an observation counts
 * toward `le = b` when its bucket's median equivalent value (within 0.05% of the value, the
 * same value the percentiles report) is ≤ b seconds; the sum adds those values too.
 */
export function histogramSeries(h: Histogram, boundsS: readonly number[], labels: Labels): HistogramSeries {
  // Start at the lowest recorded value (latencies sit orders of magnitude above 1 ns, so this
  // skips most of the array); should that tracking value ever be off, scan it all.
  const lowest = Math.min(h.countsArrayLength - 1, Math.max(0, h.countsArrayIndex(h.minNonZeroValue)));
  let scan = countFrom(h, h.getCountAtIndex(0) > 0 ? 0 : lowest, boundsS);
  if (scan.total < h.totalCount) scan = countFrom(h, 0, boundsS);
  let cumulative = 0;
  const buckets = boundsS.map((le, i) => {
    cumulative += scan.counts[i]!;
    return { le, count: cumulative };
  });
  return { labels, buckets, sum: scan.sumNs / 1e9, count: scan.total };
}

// Per-bound (not yet cumulative) counts, sum and total of the counts from index `from` on.
function countFrom(h: Histogram, from: number, boundsS: readonly number[]): { counts: number[]; sumNs: number; total: number } {
  const counts = new Array<number>(boundsS.length).fill(0);
  let sumNs = 0;
  let total = 0;
  let k = 0;
  for (let idx = from; idx < h.countsArrayLength && total < h.totalCount; idx++) {
    const n = h.getCountAtIndex(idx);
    if (n === 0) continue;
    const valueNs = h.medianEquivalentValue(h.valueFromIndex(idx));
    while (k < boundsS.length && valueNs > boundsS[k]! * 1e9) k++;
    if (k < boundsS.length) counts[k]! += n;
    sumNs += n * valueNs;
    total += n;
  }
  return { counts, sumNs, total };
}

function sampleLine(name: string, labels: Labels, value: number): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return `${name}${pairs.length > 0 ? `{${pairs.join(',')}}` : ''} ${formatValue(value)}\n`;
}

/** Go-style float text: integers plainly, others in shortest round-trip form, ±Inf and NaN spelled out. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

function escapeHelp(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabel(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
