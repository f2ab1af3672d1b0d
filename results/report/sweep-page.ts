// Pure: report.html for a sweep — latency vs offered load and throughput vs offered load with the
// capacity and the first failing value marked, then the stage table and the answer. Drawn with the
// same line chart, page and table as the run and experiment reports. Reads only sweep.json.
import { cellNum, page, table } from './html.js';
import type { LineChartSpec, LineSeries } from './line-chart.js';
import { renderLineChart } from './line-chart.js';
import { renderParetoChart } from './pareto-chart.js';
import { formatNumber } from './scale.js';
import { esc } from './svg.js';

interface Stage {
  value: number;
  verdict: string;
  reason: string;
  achieved_rps: number | null;
  /** Absent in a sweep.json written before goodput existed. */
  goodput_rps?: number | null;
  scheduled_rps: number | null;
  offered_rps: number | null;
  ttft_p50_ms: number | null;
  ttft_p95_ms: number | null;
  ttft_p99_ms: number | null;
  tpot_p95_ms: number | null;
  success_rate: number | null;
  run_dir: string | null;
  /** The stage's budget figures (absent in a sweep.json written before they existed). */
  cost?: StageCost | null;
}

interface StageCost {
  output_tok_s: number | null;
  output_tok_s_per_accelerator: number | null;
  output_tok_s_per_user: number | null;
  usd_per_million_output_tokens: number | null;
  usd_per_million_input_tokens: number | null;
}

/** The fields of sweep.json the report reads. */
export interface SweepDoc {
  name: string;
  class: string;
  unit: string;
  scale: string;
  stages: Stage[];
  capacity: number | null;
  bracket: [number | null, number | null];
  knee: { value: number | null };
  slo: { ttft_p95_ms?: number; tpot_p95_ms?: number };
  answer: string;
  stop_reason: string | null;
  /** The Pareto front across the stages (absent in a sweep.json written before it existed). */
  pareto?: unknown;
}

const VERDICT_COLOURS: Record<string, string> = { pass: '#1a7f37', fail: '#cf222e', client_limited: '#9a6700', error: '#6e7781' };

/** The whole report page. */
export function sweepReportHtml(doc: SweepDoc): string {
  const stages = [...doc.stages].sort((a, b) => a.value - b.value);
  const line = (label: string, colour: string, unit: string, f: (s: Stage) => number | null | undefined, dash?: 'dashed'): LineSeries => {
    const drawn = stages.filter((s) => f(s) !== null && f(s) !== undefined);
    return {
      label,
      colour,
      ...(dash && { dash }),
      points: drawn.map((s) => [s.value, f(s)!] as const),
      pointColours: drawn.map((s) => VERDICT_COLOURS[s.verdict] ?? colour),
      pointTitles: drawn.map((s) => `${label} at ${formatNumber(s.value)} ${doc.unit}: ${formatNumber(f(s)!)} ${unit} (${s.verdict})`),
    };
  };
  const xMax = niceMax(Math.max(1e-9, ...stages.map((s) => s.value)));
  const common = {
    xLabel: `offered load (${doc.unit})`,
    xDomain: [0, xMax] as const,
    markers: [
      ...(doc.bracket[0] === null
        ? []
        : [{ x: doc.bracket[0], label: `capacity ${formatNumber(doc.bracket[0])}`, colour: VERDICT_COLOURS.pass! }]),
      ...(doc.bracket[1] === null
        ? []
        : [{ x: doc.bracket[1], label: `fails ${formatNumber(doc.bracket[1])}`, colour: VERDICT_COLOURS.fail! }]),
    ],
    emptyMessage: 'No stage finished with this figure.',
  } satisfies Partial<LineChartSpec>;
  const latency = renderLineChart({
    ...common,
    id: 'sweep-ttft',
    title: `TTFT vs offered load (${doc.unit})`,
    definition:
      "p50, p95 and p99 time to first token of the swept class in each stage's measurement window; each point coloured by the stage's verdict",
    yLabel: 'TTFT (ms)',
    series: [
      line('p50 TTFT', '#0969da', 'ms', (s) => s.ttft_p50_ms),
      line('p95 TTFT', '#8250df', 'ms', (s) => s.ttft_p95_ms),
      line('p99 TTFT', '#bf8700', 'ms', (s) => s.ttft_p99_ms, 'dashed'),
    ],
    refLines:
      doc.slo.ttft_p95_ms === undefined ? [] : [{ y: doc.slo.ttft_p95_ms, label: `SLO p95 ${formatNumber(doc.slo.ttft_p95_ms)} ms` }],
  });
  const throughput = renderLineChart({
    ...common,
    id: 'sweep-throughput',
    title: `Achieved throughput vs offered load (${doc.unit})`,
    definition:
      "requests of the swept class that finished inside each stage's measurement window per second (achieved), those that also met every per-request SLO bound (goodput), and what the schedule offered in the window",
    yLabel: 'req/s',
    series: [
      line('achieved req/s', '#0969da', 'req/s', (s) => s.achieved_rps),
      line('goodput req/s (met every per-request SLO bound)', '#1a7f37', 'req/s', (s) => s.goodput_rps),
      line('offered in window req/s', '#6e7781', 'req/s', (s) => s.scheduled_rps, 'dashed'),
    ],
  });
  const rows = stages.map((s) => [
    cellNum(s.value),
    `<span style="color:${VERDICT_COLOURS[s.verdict] ?? '#000'}">${esc(s.verdict)}</span>`,
    ...[s.scheduled_rps, s.achieved_rps, s.goodput_rps, s.ttft_p50_ms, s.ttft_p95_ms, s.ttft_p99_ms, s.tpot_p95_ms, s.success_rate].map(
      cellNum,
    ),
    esc(s.reason),
    // The stage's directory relative to the sweep's (stages/<run>): the page sits in the sweep's directory.
    esc(s.run_dir === null ? '-' : s.run_dir.split('/').slice(-2).join('/')),
  ]);
  const legend = Object.entries(VERDICT_COLOURS)
    .map(([v, c]) => `<span style="color:${c}">● ${esc(v.replace('_', '-'))}</span>`)
    .join(' ');
  const body = [
    `<h1>Sweep ${esc(doc.name)}: capacity of ${esc(doc.class)}</h1>`,
    `<p><b>Capacity:</b> ${doc.capacity === null ? 'none found' : `${cellNum(doc.capacity)} ${esc(doc.unit)}`}; <b>bracket:</b> [${cellNum(doc.bracket[0])}, ${cellNum(doc.bracket[1])}]; <b>knee:</b> ${cellNum(doc.knee.value)}</p>`,
    `<p class="answer">${esc(doc.answer)}</p>`,
    latency,
    throughput,
    `<p>Points: ${legend}. The green line marks the capacity, the red one the first failing value.</p>`,
    '<h2>Stages</h2>',
    table(
      [
        'value',
        'verdict',
        'offered req/s',
        'achieved req/s',
        'goodput req/s',
        'p50 TTFT ms',
        'p95 TTFT ms',
        'p99 TTFT ms',
        'p95 TPOT ms',
        'success',
        'reason',
        'run',
      ],
      rows,
    ),
    `<p>Stopped: ${esc(doc.stop_reason ?? '-')}</p>`,
    ...(doc.pareto === undefined
      ? []
      : ['<h2>Cost and the Pareto front</h2>', renderParetoChart(doc.pareto, 'sweep-pareto', 'stage'), costTable(stages, doc.unit)]),
  ];
  return page(`Sweep ${doc.name}`, body.join('\n'));
}

// Each stage's budget figures over its measured window (sweep.json stages[].cost).
function costTable(stages: readonly Stage[], unit: string): string {
  const rows = stages.map((s) => [
    `${cellNum(s.value)} ${esc(unit)}`,
    esc(s.verdict),
    ...[
      s.cost?.output_tok_s,
      s.cost?.output_tok_s_per_accelerator,
      s.cost?.output_tok_s_per_user,
      s.cost?.usd_per_million_output_tokens,
      s.cost?.usd_per_million_input_tokens,
    ].map(cellNum),
  ]);
  return table(
    [
      'stage',
      'verdict',
      'output tok/s',
      'output tok/s per accelerator',
      'output tok/s per user',
      '$ per 1M output tokens',
      '$ per 1M input tokens',
    ],
    rows,
  );
}

// The x axis ends at 1, 2 or 5 × 10^k above the largest value, so the stages never sit on its edge.
export function niceMax(x: number): number {
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 5, 10]) if (m * p >= x * 1.05) return m * p;
  return 10 * p;
}
