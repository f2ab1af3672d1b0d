// Pure: the comparison's report page: the verdict table first, then per class both sides'
// distributions overlaid (empirical CDFs of TTFT, TPOT and e2e over the window all), so a shift
// in the tail is seen, not only read.
import { badge, page, table } from '../report/html.js';
import { renderLineChart } from '../report/line-chart.js';
import { colour, esc } from '../report/svg.js';
import type { baselineSource } from './baselines/statement.js';
import type { Comparison, FigureChange, RequestMetric, RunSample } from './figures.js';
import { REQUEST_METRICS } from './figures.js';

const TONE = { regressed: 'bad', improved: 'good', within_noise: 'none', undecided: 'warn', not_evaluable: 'warn' } as const;
/** Points per drawn CDF: enough to show a tail, few enough for a light page. */
const CDF_POINTS = 200;

/** [value, cumulative share] points of a sorted sample, at most CDF_POINTS of them. */
export function cdfPoints(sorted: ArrayLike<number>): [number, number][] {
  const n = sorted.length;
  if (n === 0) return [];
  const step = Math.max(1, Math.floor(n / CDF_POINTS));
  const out: [number, number][] = [];
  for (let i = 0; i < n; i += step) out.push([sorted[i]!, (i + 1) / n]);
  if (out.at(-1)![1] !== 1) out.push([sorted[n - 1]!, 1]);
  return out;
}

function pooledSorted(runs: readonly RunSample[], cls: string, m: RequestMetric): number[] {
  return runs.flatMap((r) => [...(r.classes[cls]?.all?.values[m] ?? [])]).sort((a, b) => a - b);
}

function cell(f: FigureChange): string[] {
  const n = (x: number | null) => (x === null ? '–' : String(Math.round(x * 1000) / 1000));
  const interval = f.interval ? `[${n(f.interval.low)}, ${n(f.interval.high)}]` : '–';
  const rel = f.delta_relative === null ? '' : ` (${f.delta_relative >= 0 ? '+' : ''}${(f.delta_relative * 100).toFixed(1)}%)`;
  const side = (v: number | null, who: 'baseline' | 'candidate') => (f.failures_decide.includes(who) ? '+∞ (failures)' : n(v));
  const detectable = f.gating
    ? `${n(f.detectable_change)}${f.detectable_change_relative === null ? '' : ` (${(f.detectable_change_relative * 100).toFixed(1)}%)`}`
    : '';
  return [
    esc(f.gating ? `${f.figure} (gates)` : f.figure),
    esc(side(f.baseline, 'baseline')),
    esc(side(f.candidate, 'candidate')),
    esc(`${n(f.delta)}${rel}`),
    esc(interval),
    badge(f.verdict, TONE[f.verdict]),
    esc(detectable),
    esc(f.reason ?? ''),
  ];
}

/** The whole page. */
export function comparisonPage(
  c: Comparison & { confidence: number },
  baseline: readonly RunSample[],
  candidate: readonly RunSample[],
  labels: { baseline: string; candidate: string; source?: ReturnType<typeof baselineSource> | null },
): string {
  const limits = c.limits.map((l) => `<p class="definition">Note: ${esc(l)}</p>`).join('');
  const head = `<h1>loadfleet compare</h1><p>baseline: ${esc(labels.baseline)}<br>candidate: ${esc(labels.candidate)}</p>${labels.source ? sourceSection(labels.source) : ''}<p class="definition">Method: ${esc(c.method)}; intervals at ${c.confidence * 100}% confidence. Gating figures (${c.gating.length}): ${c.regressed.length} regressed, ${c.improved.length} improved, ${c.undecided.length} undecided (beyond the interval, not beyond what one run a side cannot measure); other figures, reported and not gating: ${c.reported.regressed.length} regressed, ${c.reported.improved.length} improved.</p>${limits}`;
  const sections = Object.entries(c.classes).map(([cls, windows]) => {
    const tables = Object.entries(windows)
      .map(
        ([w, figs]) =>
          `<h3>${esc(cls)} — window ${esc(w)}</h3>${table(['figure', 'baseline', 'candidate', 'Δ', 'interval of Δ', 'verdict', 'smallest detectable worsening', 'reason'], figs.map(cell), 'compare')}`,
      )
      .join('');
    const charts = REQUEST_METRICS.map((m) =>
      renderLineChart({
        id: `compare-${cls}-${m}`,
        title: `${cls}: ${m.toUpperCase()} distribution, baseline vs candidate (window all)`,
        definition: `Empirical CDF of ${m} (ms) over successful requests, each side pooled over its runs: the share of successful requests at or below each value (failed requests, which rank +∞ in the figures, are not drawn).`,
        xLabel: `${m} (ms)`,
        yLabel: 'share of requests ≤ x',
        series: [
          { label: 'baseline', colour: colour(0), points: cdfPoints(pooledSorted(baseline, cls, m)) },
          { label: 'candidate', colour: colour(1), dash: 'dashed', points: cdfPoints(pooledSorted(candidate, cls, m)) },
        ],
        emptyMessage: `no successful request carries ${m} on either side`,
      }),
    ).join('');
    return `<h2>${esc(cls)}</h2>${tables}${charts}`;
  });
  return page('loadfleet compare', head + sections.join(''));
}

/** Where a baseline from another tool came from, and how each of its figures maps onto loadfleet's. */
function sourceSection(s: ReturnType<typeof baselineSource>): string {
  const data =
    s.data === 'per-request'
      ? `per request (${s.requests} requests, ${s.failed} failed): bootstrapped in blocks like a loadfleet run`
      : `aggregates only (${s.requests ?? 'an unstated number of'} requests, ${s.failed ?? 'unstated'} failed): compared as fixed points, without the baseline's own sampling variation`;
  const rows = s.figures.map((f) => [esc(f.figure), esc(f.source ?? '–'), esc(f.conversion), esc(f.comparable), esc(f.note)]);
  return `<h2>Baseline from ${esc(s.tool)}</h2><p>Tool: ${esc(s.tool)}; version: ${esc(s.version ?? 'not stated in the file')}; format: ${esc(s.format)}; file: ${esc(s.file)}.<br>Data: ${esc(data)}.</p>${table(['loadfleet figure', 'read from', 'conversion', 'comparable', 'how the definitions differ'], rows, 'baseline-figures')}`;
}
