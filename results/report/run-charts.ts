// The run report's charts, each from one artifact: TTFT percentiles over time (histograms.hlog),
// offered vs achieved traffic (traffic.csv), server signals (server-metrics.csv) and per-agent
// schedule lag (requests.ndjson). Pure: parsed data in, <figure> strings out.
import type { IntervalPercentiles } from './hlog-series.js';
import type { Band, LineSeries } from './line-chart.js';
import { renderLineChart } from './line-chart.js';
import type { ServerConcept, SourceSeries } from './server-series.js';
import { SERVER_METRIC_NAMES } from './server-series.js';
import { colour, emptyNote, figure } from './svg.js';
import type { ClassTraffic } from './traffic-series.js';

/** Everything the charts need, already read from the run directory (null: the file is absent). */
export interface RunChartData {
  /** Class names in plan order (fixes each class's colour across charts). */
  classes: readonly string[];
  windows: readonly { name: string; start_s: number; end_s: number }[];
  /** The planned duration, so every time axis covers at least the plan. */
  durationS: number;
  /** When the last request finished (run.json wall_clock_ms), s: the axes reach it; null when unknown. */
  endS?: number | null;
  /** Per class: p50 and p95 TTFT per interval (by the second requests finished, histograms.hlog). */
  ttft: Map<string, IntervalPercentiles[]> | null;
  /** Per class: p50 and p95 TTFT by the second of intended send time (requests.ndjson); null when absent. */
  ttftByIntended?: Map<string, IntervalPercentiles[]> | null;
  traffic: ClassTraffic[] | null;
  server: Map<ServerConcept, SourceSeries[]> | null;
  lag: { agent: string; points: [number, number][]; requests: number }[] | null;
}

const X_LABEL = 'time since run start (s)';
/** Above this many agents the lag chart shows the median and worst agent instead of one line each. */
const MAX_AGENT_LINES = 12;

/** All the run's charts, in reading order. */
export function runCharts(d: RunChartData): string {
  const bands: Band[] = d.windows.map((w) => ({ label: w.name, fromX: w.start_s, toX: w.end_s }));
  const xDomain = [0, timeExtent(d)] as const;
  // The drain: from the plan's end to the last request's end, where requests still finish.
  if (d.endS != null && d.endS > d.durationS) bands.push({ label: 'drain', fromX: d.durationS, toX: d.endS, kind: 'drain' });
  const common = { bands, xDomain, xLabel: X_LABEL };
  return [
    '<h2>Latency</h2>',
    ttftChart(d, common),
    ttftIntendedChart(d, common),
    '<h2>Traffic</h2>',
    ...trafficCharts(d, common),
    '<h2>Server</h2>',
    ...serverCharts(d, common),
    '<h2>Client</h2>',
    lagChart(d, common),
  ].join('');
}

type Common = { bands: Band[]; xDomain: readonly [number, number]; xLabel: string };

function classColour(d: RunChartData, cls: string): string {
  const i = d.classes.indexOf(cls);
  return colour(i >= 0 ? i : d.classes.length);
}

function ttftChart(d: RunChartData, common: Common): string {
  const series: LineSeries[] = [];
  for (const [cls, intervals] of orderByClass(d, d.ttft ?? new Map<string, IntervalPercentiles[]>())) {
    const pts = (k: number) => intervals.map((iv): [number, number] => [iv.startS + iv.lengthS / 2, iv.valuesMs[k]!]);
    series.push({ label: `${cls} p95`, colour: classColour(d, cls), points: pts(1) });
    series.push({ label: `${cls} p50`, colour: classColour(d, cls), dash: 'dashed', points: pts(0) });
  }
  return renderLineChart({
    id: 'ttft-over-time',
    title: 'Time to first token per class by the second requests finished, p50 and p95',
    definition:
      'TTFT (first content token − send) p50 and p95, nearest rank, of the successful requests that finished in each 1 s interval, read from the merged interval histograms in histograms.hlog; windows group requests by intended send time, so a slow request shows to the right of its window (the next chart keeps it in its window).',
    yLabel: 'TTFT (ms)',
    series,
    ...common,
    emptyMessage: d.ttft === null ? 'histograms.hlog is absent' : 'no successful request finished, so no TTFT interval has data',
  });
}

function ttftIntendedChart(d: RunChartData, common: Common): string {
  const series: LineSeries[] = [];
  for (const [cls, intervals] of orderByClass(d, d.ttftByIntended ?? new Map<string, IntervalPercentiles[]>())) {
    const pts = (k: number) => intervals.map((iv): [number, number] => [iv.startS + iv.lengthS / 2, iv.valuesMs[k]!]);
    series.push({ label: `${cls} p95`, colour: classColour(d, cls), points: pts(1) });
    series.push({ label: `${cls} p50`, colour: classColour(d, cls), dash: 'dashed', points: pts(0) });
  }
  return renderLineChart({
    id: 'ttft-by-intended',
    title: 'Time to first token per class by intended send time, p50 and p95',
    definition:
      'TTFT (first content token − send) p50 and p95, exact nearest rank over requests.ndjson, of the successful open-loop requests whose intended send time fell in each 1 s interval: the basis of the plan windows and the SLO verdict, so a request counts in the second it was meant to be sent however late it finished (closed-loop requests have no intended time and are left out).',
    yLabel: 'TTFT (ms)',
    series,
    ...common,
    emptyMessage:
      d.ttftByIntended == null ? 'requests.ndjson is absent' : 'no successful open-loop request, so no TTFT by intended send time',
  });
}

function trafficCharts(d: RunChartData, common: Common): string[] {
  const traffic = d.traffic ?? [];
  const open = traffic.filter((t) => !t.closedLoop);
  const closed = traffic.filter((t) => t.closedLoop);
  const charts = [
    renderLineChart({
      id: 'traffic',
      title: 'Offered vs achieved traffic per class',
      definition:
        'Per class and 1 s interval, from traffic.csv: the arrivals the global schedule planned (offered, wide pale line), the requests the agents sent (achieved, thin line inside it when the schedule was kept), and the requests that finished, successfully or not (dotted).',
      yLabel: 'requests per second',
      series: open.flatMap((t) => [
        { label: `${t.cls} offered`, colour: classColour(d, t.cls), dash: 'halo' as const, points: t.target },
        { label: `${t.cls} sent`, colour: classColour(d, t.cls), points: t.issued },
        { label: `${t.cls} finished`, colour: classColour(d, t.cls), dash: 'dotted' as const, points: t.completed },
      ]),
      ...common,
      emptyMessage: d.traffic === null ? 'traffic.csv is absent' : 'traffic.csv has no open-loop (rate) rows',
    }),
  ];
  if (closed.length > 0)
    charts.push(
      renderLineChart({
        id: 'concurrency',
        title: 'Target vs achieved concurrency per closed-loop class',
        definition:
          'Per closed-loop class and 1 s interval, from traffic.csv: the concurrency the plan asked for and the requests outstanding (sent, not yet finished) at the end of the interval.',
        yLabel: 'requests in flight',
        series: closed.flatMap((t) => [
          { label: `${t.cls} target`, colour: classColour(d, t.cls), dash: 'halo' as const, points: t.target },
          { label: `${t.cls} outstanding`, colour: classColour(d, t.cls), points: t.outstanding },
        ]),
        ...common,
        emptyMessage: 'no closed-loop rows',
      }),
    );
  return charts;
}

const SERVER_LABEL: Record<ServerConcept, string> = {
  running: 'vLLM running',
  waiting: 'vLLM waiting',
  gateway_queue: 'gateway queued',
  kv_cache_pct: 'vLLM KV cache',
  pool_saturation: 'gateway pool saturation',
};

function serverLines(d: RunChartData, concepts: readonly ServerConcept[]): LineSeries[] {
  const server = d.server ?? new Map<ServerConcept, SourceSeries[]>();
  const out: LineSeries[] = [];
  for (const concept of concepts) {
    const lines = server.get(concept) ?? [];
    for (const l of lines)
      out.push({
        label: lines.length > 1 ? `${SERVER_LABEL[concept]} (${l.source})` : SERVER_LABEL[concept],
        colour: colour(out.length),
        points: l.points,
      });
  }
  return out;
}

function missing(concepts: readonly ServerConcept[]): string {
  return `no ${concepts.flatMap((c) => SERVER_METRIC_NAMES[c]).join(' / ')} samples in server-metrics.csv`;
}

function serverCharts(d: RunChartData, common: Common): string[] {
  if (d.server === null)
    return [
      figure(
        {
          id: 'server',
          title: 'Server signals',
          definition: 'Running, waiting, KV cache usage and pool saturation as scraped from the server during the run.',
        },
        emptyNote('no server metrics scraped (server-metrics.csv is absent from this run directory)'),
      ),
    ];
  const queues: ServerConcept[] = ['running', 'waiting', 'gateway_queue'];
  return [
    renderLineChart({
      id: 'server-queues',
      title: 'Requests running and waiting on the server',
      definition:
        'At each scrape, summed over series: requests in vLLM’s running batch, requests waiting in vLLM’s queue, and requests held in the gateway’s flow-control queues, from server-metrics.csv.',
      yLabel: 'requests',
      series: serverLines(d, queues),
      ...common,
      emptyMessage: missing(queues),
    }),
    renderLineChart({
      id: 'server-kv-cache',
      title: 'vLLM KV cache usage',
      definition: 'At each scrape, the share of vLLM’s KV cache blocks in use (kv_cache_usage_perc × 100), from server-metrics.csv.',
      yLabel: 'KV cache in use (%)',
      series: serverLines(d, ['kv_cache_pct']),
      ...common,
      emptyMessage: missing(['kv_cache_pct']),
    }),
    renderLineChart({
      id: 'server-pool-saturation',
      title: 'Gateway pool saturation',
      definition:
        'At each scrape, the gateway flow controller’s pool saturation (in-flight requests over its admission limit; 1.0 or more means full and new requests queue), from server-metrics.csv.',
      yLabel: 'saturation (ratio)',
      series: serverLines(d, ['pool_saturation']),
      refLines: [{ y: 1, label: '1.0 = pool full' }],
      ...common,
      emptyMessage: missing(['pool_saturation']),
    }),
  ];
}

function lagChart(d: RunChartData, common: Common): string {
  const lag = d.lag ?? [];
  let series: LineSeries[];
  let detail: string;
  if (lag.length <= MAX_AGENT_LINES) {
    series = lag.map((a, i) => ({ label: a.agent, colour: colour(i), points: a.points }));
    detail = 'one line per agent';
  } else {
    series = acrossAgents(lag);
    detail = `${lag.length} agents, shown as the median and the worst agent’s p99 per second`;
  }
  return renderLineChart({
    id: 'schedule-lag',
    title: 'Schedule lag per agent, p99 per second',
    definition: `For each agent and 1 s interval of intended send time, the p99 (nearest rank) of sent − intended over its open-loop requests, from requests.ndjson (${detail}; closed-loop requests have no intended time and are left out).`,
    yLabel: 'schedule lag p99 (ms)',
    series,
    ...common,
    emptyMessage: d.lag === null ? 'requests.ndjson is absent' : 'no open-loop request was sent, so there is no schedule lag',
  });
}

function acrossAgents(lag: NonNullable<RunChartData['lag']>): LineSeries[] {
  const bySecond = new Map<number, number[]>();
  for (const a of lag) for (const [x, y] of a.points) bySecond.set(x, [...(bySecond.get(x) ?? []), y]);
  const xs = [...bySecond.keys()].sort((a, b) => a - b);
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.ceil(v.length / 2) - 1]!;
  return [
    { label: 'median over agents', colour: colour(0), points: xs.map((x) => [x, median(bySecond.get(x)!)]) },
    { label: 'worst agent', colour: colour(1), points: xs.map((x) => [x, Math.max(...bySecond.get(x)!)]) },
  ];
}

function orderByClass<T>(d: RunChartData, m: Map<string, T>): [string, T][] {
  const rank = (c: string) => d.classes.indexOf(c) + 1 || d.classes.length + 1;
  return [...m].sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
}

function timeExtent(d: RunChartData): number {
  const xs: number[] = [d.durationS, d.endS ?? 0];
  for (const ivs of d.ttft?.values() ?? []) for (const iv of ivs) xs.push(iv.startS + iv.lengthS);
  for (const t of d.traffic ?? []) for (const [x] of t.issued) xs.push(x + 0.5);
  for (const lines of d.server?.values() ?? []) for (const l of lines) for (const [x] of l.points) xs.push(x);
  for (const a of d.lag ?? []) for (const [x] of a.points) xs.push(x + 0.5);
  return Math.ceil(Math.max(...xs));
}
