// Pure: an llm-d Benchmark Report (v0.2.x, YAML or JSON; written natively by inference-perf and
// loadfleet, converted from the other tools by llm-d-benchmark) as a baseline. It holds aggregates
// only: results.request_performance.aggregate with request counts and, per latency figure, a
// Statistics block (units, mean, p0p1…p99p9, min, max).
import type { BaselineMetric, FigureSource, ForeignBaseline } from './types.js';
import { Problems, toMsFactor } from './types.js';

const STAT_QUANTILES: Record<string, number> = {
  p0p1: 0.001,
  p1: 0.01,
  p5: 0.05,
  p10: 0.1,
  p25: 0.25,
  p50: 0.5,
  p75: 0.75,
  p90: 0.9,
  p95: 0.95,
  p99: 0.99,
  p99p9: 0.999,
  max: 1,
};
const FIELDS: Record<BaselineMetric, string> = {
  ttft: 'time_to_first_token',
  tpot: 'time_per_output_token',
  e2e: 'request_latency',
  itl: 'inter_token_latency',
};

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Whether a parsed document looks like a Benchmark Report. */
export function looksLikeBenchmarkReport(doc: unknown): boolean {
  return isObj(doc) && typeof doc.version === 'string' && /^0\.2(\.|$)/.test(doc.version) && isObj(doc.results) && isObj(doc.run);
}

function figures(tool: string): FigureSource[] {
  const at = (f: string) => `$.results.request_performance.aggregate.latency.${f}`;
  const conv = 'by its units (ms, s, ms/token, s/token)';
  const by = `as ${tool} defines it`;
  return [
    { figure: 'ttft', source: at(FIELDS.ttft), conversion: conv, comparable: 'close', note: `time to first token, ${by}` },
    {
      figure: 'tpot',
      source: at(FIELDS.tpot),
      conversion: conv,
      comparable: 'close',
      note: `time per output token excluding the first (the report's normalized_time_per_output_token, which includes it, is not used), ${by}`,
    },
    { figure: 'e2e', source: at(FIELDS.e2e), conversion: conv, comparable: 'close', note: `request latency, ${by}` },
    {
      figure: 'itl',
      source: at(FIELDS.itl),
      conversion: conv,
      comparable: 'close',
      note: `inter-token latency, ${by}: gaps between chunks in loadfleet's and vLLM's reports, a per-request average in some converters`,
    },
    {
      figure: 'success_rate',
      source: '$.results.request_performance.aggregate.requests.{total,failures,incomplete}',
      conversion: 'share',
      comparable: 'same',
      note: '(total − failures − incomplete) / (total − incomplete)',
    },
  ];
}

/** The baseline, or the problems that make the report unreadable as one. */
export function readBenchmarkReport(doc: Record<string, unknown>): ForeignBaseline | { problems: string[] } {
  const p = new Problems();
  const base = '$.results.request_performance.aggregate';
  const results = p.obj(doc.results, '$.results');
  const rp = results ? p.obj(results.request_performance, '$.results.request_performance') : null;
  const agg = rp ? p.obj(rp.aggregate, base) : null;
  const reqs = agg ? p.obj(agg.requests, `${base}.requests`) : null;
  const total = reqs ? p.num(reqs.total, `${base}.requests.total`) : null;
  const failures = reqs ? (p.num(reqs.failures, `${base}.requests.failures`, true) ?? 0) : 0;
  const incomplete = reqs ? (p.num(reqs.incomplete, `${base}.requests.incomplete`, true) ?? 0) : 0;
  const latency = agg ? p.obj(agg.latency, `${base}.latency`) : null;
  const aggregate: ForeignBaseline['aggregate'] = {};
  for (const [m, field] of Object.entries(FIELDS) as [BaselineMetric, string][]) {
    const at = `${base}.latency.${field}`;
    const s = latency ? p.obj(latency[field], at, true) : null;
    if (!s) continue;
    const f = toMsFactor(s.units);
    if (f === null) {
      p.add(`${at}.units`, `expected a time unit (ms, s, ms/token, s/token), got ${JSON.stringify(s.units)}`);
      continue;
    }
    p.num(s.mean, `${at}.mean`);
    const q = new Map<number, number>();
    for (const [k, quantile] of Object.entries(STAT_QUANTILES)) {
      const v = p.num(s[k], `${at}.${k}`, true);
      if (v !== null) q.set(quantile, v * f);
    }
    if (q.size > 0) aggregate[m] = q;
  }
  if (latency && Object.keys(aggregate).length === 0 && p.list.length === 0)
    p.add(`${base}.latency`, `no latency figure with percentiles (${Object.values(FIELDS).join(', ')})`);
  if (total !== null && failures + incomplete > total)
    p.add(`${base}.requests`, `failures + incomplete (${failures + incomplete}) exceed total (${total})`);
  if (p.list.length > 0) return { problems: p.list };
  const load = (((doc.scenario as Record<string, unknown> | undefined)?.load ?? {}) as Record<string, unknown>).standardized;
  const std = isObj(load) ? load : {};
  const tool = typeof std.tool === 'string' ? std.tool : 'the producing tool';
  return {
    format: 'benchmark-report',
    ttftEnds: reportTtftEnds(tool),
    tool: `llm-d Benchmark Report ${String(doc.version)} (from ${tool})`,
    version: typeof std.tool_version === 'string' ? `${tool} ${std.tool_version}` : null,
    data: 'aggregate',
    order: null,
    requests: null,
    itlGaps: null,
    aggregate,
    total: total! - incomplete,
    failed: failures,
    excluded: incomplete > 0 ? { count: incomplete, why: 'incomplete (cut by the end of the run)' } : null,
    figures: figures(tool),
    load: {
      run_uid: (doc.run as Record<string, unknown>).uid ?? null,
      rate_qps: std.rate_qps ?? null,
      concurrency: std.concurrency ?? null,
      input_seq_len: std.input_seq_len ?? null,
      output_seq_len: std.output_seq_len ?? null,
    },
    limits:
      tool === 'loadfleet'
        ? [
            "a loadfleet Benchmark Report for the whole run merges every class, and its latency percentiles come from the HDR histograms at 3 significant digits; compare run directories for loadfleet's exact per-class figures",
          ]
        : [],
  };
}

/** Which token ends TTFT in a report converted from `tool`: known for the tools whose definitions loadfleet reads; null otherwise. */
export function reportTtftEnds(tool: string): 'first_output' | 'first_content' | null {
  if (/^loadfleet$/i.test(tool)) return 'first_content';
  return /^(vllm|aiperf|guidellm)\b/i.test(tool) ? 'first_output' : null;
}
