// An experiment's report.html from its analysis.json (the seed's shape): the question and the
// answer, the compared figure per arm (median, min–max whisker, each repeat as a dot), the same
// picture for every other {median, min, max} figure, and the per-arm and per-run tables. Pure.
import { COST_COLUMNS } from '../../figures/cost/arm-cost.js';
import type { ArmValue } from './arm-chart.js';
import { renderArmChart } from './arm-chart.js';
import type { Obj } from './fields.js';
import { arr, boolOrNull, numOrNull, obj, spread, strOrNull } from './fields.js';
import { figureAxisLabel, figureMeaning, figureName, figureUnit } from './figure-names.js';
import { badge, cellNum, compactJson, page, table, verdict } from './html.js';
import { renderParetoChart } from './pareto-chart.js';
import { esc } from './svg.js';

/** analysis.json plus, per entry of its runs[], a link to that run's report (null: none). */
export interface ExperimentReportInput {
  analysis: Obj;
  runLinks: readonly (string | null)[];
}

/** Which figure the experiment compares, and which arms (null when the analysis does not say). */
export interface Compared {
  metric: string | null;
  baseline: string | null;
  treatment: string | null;
}

/** The figures that are `{median, min, max}` in any arm, in first-seen order. */
export function spreadFigures(analysis: Obj): string[] {
  const keys = new Set<string>();
  for (const arm of Object.values(obj(analysis.by_arm))) for (const [k, v] of Object.entries(obj(arm))) if (spread(v)) keys.add(k);
  return [...keys];
}

/**
 * The compared figure: named by `compare.metric` when the analysis carries it, else recovered from
 * the comparison's keys (`realtime_p95_ttft_increase_ms` → the figure whose name holds every word
 * of `realtime_p95_ttft`, the shortest such), else the first figure.
 */
export function comparedFigure(analysis: Obj): Compared {
  const compare = { ...obj(analysis.comparison), ...obj(analysis.compare) };
  const arms = Object.keys(obj(analysis.by_arm));
  const figures = spreadFigures(analysis);
  let metric = strOrNull(compare.metric);
  if (metric === null || !figures.includes(metric)) {
    const stems = Object.keys(obj(analysis.comparison))
      .map((k) => /^(.+?)_(increase_ms|factor|difference_ms|ratio)$/.exec(k)?.[1])
      .filter((s): s is string => s !== undefined);
    const candidates = figures
      .filter((f) => stems.some((s) => s.split('_').every((w) => f.split('_').includes(w))))
      .sort((a, b) => a.length - b.length);
    metric = candidates[0] ?? figures[0] ?? null;
  }
  return {
    metric,
    baseline: strOrNull(compare.baseline) ?? arms[0] ?? null,
    treatment: strOrNull(compare.treatment) ?? arms[1] ?? null,
  };
}

const PERCENTILE_FIGURE = /^(.+)_p\d+_[a-z0-9]+_ms$/;

/**
 * The figures worth a chart: the compared figure's class-and-window siblings (its other
 * percentiles and metrics) and every figure that is not a per-window percentile (server peaks,
 * queue means); the percentiles of other classes and windows go to a folded table only, so an
 * analysis with many windows does not bury the question under dozens of charts.
 */
export function keyFigures(figures: readonly string[], compared: string | null): { key: string[]; rest: string[] } {
  const scope = compared ? PERCENTILE_FIGURE.exec(compared)?.[1] : undefined;
  const isKey = (f: string) => {
    const m = PERCENTILE_FIGURE.exec(f);
    return !m || scope === undefined || m[1] === scope;
  };
  return { key: figures.filter(isKey), rest: figures.filter((f) => !isKey(f)) };
}

/** Per arm: the figure's median/min/max and every repeat's own value from runs[]. */
export function armValues(analysis: Obj, figure: string): ArmValue[] {
  const runs = arr(analysis.runs).map(obj);
  return Object.entries(obj(analysis.by_arm)).map(([arm, a]) => {
    const s = spread(obj(a)[figure]) ?? { median: null, min: null, max: null };
    const repeats = runs
      .filter((r) => r.arm === arm && numOrNull(r[figure]) !== null)
      .sort((x, y) => (numOrNull(x.repeat) ?? 0) - (numOrNull(y.repeat) ?? 0))
      .map((r) => ({ label: `repeat ${numOrNull(r.repeat) ?? '?'}`, value: numOrNull(r[figure])! }));
    return { arm, ...s, repeats };
  });
}

/** The whole experiment report page. */
export function renderExperimentReport(input: ExperimentReportInput): string {
  const a = input.analysis;
  const cmp = comparedFigure(a);
  const { key, rest } = keyFigures(spreadFigures(a), cmp.metric);
  // The budget figures are drawn together in the Pareto chart (and listed in the table), not one chart each.
  const others = key.filter((f) => f !== cmp.metric && !(COST_COLUMNS as readonly string[]).includes(f));
  const body = [
    header(a),
    '<h2>Comparison</h2>',
    cmp.metric
      ? `${armChart(a, cmp.metric, 'compare', 'main')}${comparisonText(a, cmp)}${armChart(a, cmp.metric, 'compare-detail', 'detail')}`
      : '<p class="no-data">analysis.json has no {median, min, max} figure to compare</p>',
    armTable(a),
    others.length > 0
      ? `<h2>Figures per arm</h2>${figureTable(a, key)}<div class="grid2">${others.map((f) => armChart(a, f, f, 'grid')).join('')}</div>`
      : '',
    rest.length > 0
      ? `<h2>Other classes and windows</h2><details><summary>${rest.length} more figures per arm</summary>${figureTable(a, rest)}</details>`
      : '',
    a.pareto === undefined ? '' : `<h2>Cost and the Pareto front</h2>${renderParetoChart(a.pareto, 'experiment-pareto', 'arm')}`,
    runsTable(a, input.runLinks, cmp.metric),
  ];
  return page(`loadfleet experiment ${strOrNull(a.experiment) ?? ''}`, body.join(''));
}

function header(a: Obj): string {
  const q = strOrNull(a.business_question);
  const answer = strOrNull(a.answer);
  const boundary = strOrNull(a.claim_boundary);
  const meta = [
    numOrNull(a.run_count) !== null && `${numOrNull(a.run_count)} runs`,
    Object.keys(obj(a.by_arm)).length > 0 && `${Object.keys(obj(a.by_arm)).length} arms`,
    strOrNull(a.schema) && `schema ${strOrNull(a.schema)}`,
  ].filter((x): x is string => typeof x === 'string');
  return [
    `<h1>Experiment ${esc(strOrNull(a.experiment) ?? '(unnamed)')}</h1>`,
    `<p class="meta">${meta.map((m) => `<span>${esc(m)}</span>`).join('')}</p>`,
    q ? `<p><strong>Question:</strong> ${esc(q)}</p>` : '',
    answer ? `<p class="answer"><strong>Answer:</strong> ${esc(answer)}</p>` : '',
    boundary ? `<p class="boundary">${esc(boundary)}</p>` : '',
    `<p>Data quality, every run: ${verdict(boolOrNull(a.all_data_quality_valid))} · SLO proof, every run: ${verdict(boolOrNull(a.all_slo_proof_valid))}</p>`,
  ].join('');
}

function armChart(a: Obj, fig: string, id: string, layout: 'main' | 'detail' | 'grid'): string {
  const meaning = strOrNull(obj(a.definitions)[fig]) ?? figureMeaning(fig);
  const how = {
    main: 'per arm the median over repeats (bar), the min–max range (whisker) and each repeat’s own value (dot)',
    detail: 'the same values with each arm on its own linear axis, so the spread of its repeats shows',
    grid: 'bar: median over repeats, whisker: min–max, dot: one repeat',
  }[layout];
  return renderArmChart({
    id: `arm-${id}`,
    title: layout === 'detail' ? `${figureName(fig)}: spread of the repeats within each arm` : `${figureName(fig)} per arm`,
    definition: `Per run, ${meaning}; ${how}, from analysis.json.`,
    valueLabel: figureAxisLabel(fig),
    unit: figureUnit(fig),
    arms: armValues(a, fig),
    width: layout === 'grid' ? 420 : 860,
    axis: layout === 'detail' ? 'per-arm' : 'shared',
    emptyMessage: `no arm has a value for ${fig}`,
  });
}

function comparisonText(a: Obj, cmp: Compared): string {
  const entries = Object.entries(obj(a.comparison)).filter(([, v]) => numOrNull(v) !== null);
  if (entries.length === 0) return '';
  const arms = cmp.baseline && cmp.treatment ? ` (${esc(cmp.treatment)} against ${esc(cmp.baseline)}, arm medians)` : '';
  const items = entries.map(
    ([k, v]) => `<li><code>${esc(k)}</code>: <strong>${cellNum(numOrNull(v))}${k.endsWith('_factor') ? '×' : ''}</strong></li>`,
  );
  return `<p>Comparison${arms}:</p><ul>${items.join('')}</ul>`;
}

// Per-arm columns: shown when at least one arm records the key (the analysis grows by branch).
const ARM_COLUMNS: readonly [header: string, key: string, cell: (v: unknown) => string][] = [
  ['runs', 'runs', (v) => cellNum(numOrNull(v))],
  ['SLO verdict', 'slo_verdict', (v) => armVerdictCell(v)],
  ['data quality', 'all_data_quality_valid', (v) => verdict(boolOrNull(v))],
  ['SLO proof', 'all_slo_proof_valid', (v) => verdict(boolOrNull(v))],
  ['HTTP 200', 'http_200_total', (v) => cellNum(numOrNull(v))],
  ['HTTP 429', 'http_429_total', (v) => cellNum(numOrNull(v))],
  ['flow control engaged (runs)', 'flow_control_materially_engaged_runs', (v) => cellNum(numOrNull(v))],
  ['repeats', 'stable', (v) => (boolOrNull(v) === null ? '–' : v ? badge('stable', 'good') : badge('unstable', 'bad'))],
  ['repeat spread', 'repeat_spread', (v) => repeatSpread(v)],
];

// One badge per class: "realtime: SLO MISSED (3 of 3 runs)", from by_arm.<arm>.slo_verdict.
function armVerdictCell(v: unknown): string {
  const parts = Object.entries(obj(v)).map(([cls, x]) => {
    const o = obj(x);
    const runs = (numOrNull(o.runs_met) ?? 0) + (numOrNull(o.runs_missed) ?? 0) + (numOrNull(o.runs_not_evaluable) ?? 0);
    const verdictWord = strOrNull(o.verdict);
    const tone = verdictWord === 'met' ? 'good' : verdictWord === 'missed' ? 'bad' : 'none';
    const count =
      verdictWord === 'missed'
        ? `${numOrNull(o.runs_missed)} of ${runs} runs`
        : verdictWord === 'met'
          ? `all ${runs} runs`
          : `${numOrNull(o.runs_not_evaluable)} of ${runs} runs`;
    const word = verdictWord === 'met' ? 'SLO met' : verdictWord === 'missed' ? 'SLO MISSED' : 'not evaluable';
    return `${esc(cls)}: ${badge(word, tone)} <small>(${esc(count)})</small>`;
  });
  return parts.length > 0 ? parts.join('<br>') : '–';
}

// `{max_over_min, limit, …}` reads as "1.077× (limit 1.5×)"; any other shape is shown as it is.
function repeatSpread(v: unknown): string {
  const o = obj(v);
  const ratio = numOrNull(o.max_over_min);
  if (ratio === null) return strOrNull(o.not_evaluated_reason) ? esc(strOrNull(o.not_evaluated_reason)!) : compactJson(v);
  const limit = numOrNull(o.limit);
  return `${cellNum(ratio)}×${limit === null ? '' : ` <small>(limit ${cellNum(limit)}×)</small>`}`;
}

function armTable(a: Obj): string {
  const arms = Object.entries(obj(a.by_arm)).map(([arm, v]) => [arm, obj(v)] as const);
  const cols = ARM_COLUMNS.filter(([, key]) => arms.some(([, o]) => key in o));
  const rows = arms.map(([arm, o]) => [`<strong>${esc(arm)}</strong>`, ...cols.map(([, key, cell]) => (key in o ? cell(o[key]) : '–'))]);
  return `<h2>Arms</h2>${table(['arm', ...cols.map(([h]) => esc(h))], rows)}`;
}

function figureTable(a: Obj, figures: readonly string[]): string {
  const arms = Object.entries(obj(a.by_arm));
  const rows = figures.map((f) => [
    `<span title="${esc(figureMeaning(f))}">${esc(figureAxisLabel(f))}</span>`,
    ...arms.map(([, v]) => {
      const s = spread(obj(v)[f]);
      return s ? `${cellNum(s.median)} <small>[${cellNum(s.min)} – ${cellNum(s.max)}]</small>` : '–';
    }),
  ]);
  return `${table(['figure', ...arms.map(([arm]) => esc(arm))], rows)}<p class="definition">Median over repeats, with [min – max] over repeats; percentiles are per run and never pooled across repeats.</p>`;
}

function runsTable(a: Obj, links: readonly (string | null)[], metric: string | null): string {
  const runs = arr(a.runs).map(obj);
  if (runs.length === 0) return '';
  const rows = runs.map((r, i) => {
    const name = strOrNull(r.run_name) ?? strOrNull(r.run_dir) ?? `run ${i + 1}`;
    const link = links[i];
    const engaged = boolOrNull(r.flow_control_materially_engaged);
    return [
      esc(strOrNull(r.arm) ?? '?'),
      cellNum(numOrNull(r.repeat)),
      `<span class="text">${link ? `<a href="${esc(link)}">${esc(name)}</a>` : esc(name)}</span>`,
      verdict(boolOrNull(r.data_quality_valid)),
      verdict(boolOrNull(r.slo_proof_valid)),
      cellNum(numOrNull(r.http_200)),
      cellNum(numOrNull(r.http_429)),
      ...(metric ? [cellNum(numOrNull(r[metric]))] : []),
      engaged === null ? '–' : esc(String(engaged)),
    ];
  });
  const headers = [
    'arm',
    'repeat',
    'run',
    'data quality',
    'SLO proof',
    'HTTP 200',
    'HTTP 429',
    ...(metric ? [esc(figureAxisLabel(metric))] : []),
    'flow control engaged',
  ];
  return `<h2>Runs</h2>${table(headers, rows)}`;
}
