// Pure: a GuideLLM report (benchmarks.json: a list of benchmarks, one per strategy or rate) as a
// baseline. Each benchmark holds distribution summaries by status (metrics.<name>.successful:
// median, percentiles p001…p999, max) and, where saved, its requests by status with their timings
// (unix seconds) and figures (TTFT and ITL in ms, request latency in seconds).
import type { BaselineMetric, FigureSource, ForeignBaseline, ForeignRequest } from './types.js';
import { Problems } from './types.js';

/** GuideLLM's percentile keys as quantiles. */
const QUANTILES: Record<string, number> = {
  p001: 0.001,
  p01: 0.01,
  p05: 0.05,
  p10: 0.1,
  p25: 0.25,
  p50: 0.5,
  p75: 0.75,
  p90: 0.9,
  p95: 0.95,
  p99: 0.99,
  p999: 0.999,
};

/** Whether a parsed document looks like a GuideLLM report. */
export function looksLikeGuidellm(doc: unknown): boolean {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return false;
  const b = (doc as Record<string, unknown>).benchmarks;
  return Array.isArray(b) && b.length > 0 && typeof b[0] === 'object' && b[0] !== null && 'metrics' in b[0];
}

/** One line per benchmark, for choosing one with --baseline-benchmark. */
export function guidellmBenchmarks(doc: Record<string, unknown>): string[] {
  return (doc.benchmarks as Record<string, unknown>[]).map((b, i) => {
    const s = ((b.config as Record<string, unknown> | undefined)?.strategy ?? {}) as Record<string, unknown>;
    return `${i}: ${String(s.type_ ?? 'strategy')}${typeof s.rate === 'number' ? ` at ${s.rate} req/s` : ''}${typeof s.streams === 'number' ? ` with ${s.streams} streams` : ''}`;
  });
}

function figures(perRequest: boolean, ttftField: string): FigureSource[] {
  const at = (req: string, agg: string) =>
    perRequest ? `$.benchmarks[k].requests.successful[i].${req}` : `$.benchmarks[k].metrics.${agg}.successful`;
  return [
    {
      figure: 'ttft',
      source: at(ttftField, ttftField),
      conversion: 'ms as written',
      comparable: ttftField === 'time_to_first_output_token_ms' ? 'same' : 'close',
      note:
        ttftField === 'time_to_first_output_token_ms'
          ? 'first non-reasoning content token after the request started, as loadfleet'
          : "first token of any kind (reasoning included): loadfleet's TTFO; equal to TTFT for a model that does not reason",
    },
    {
      figure: 'tpot',
      source: at('inter_token_latency_ms', 'inter_token_latency_ms'),
      conversion: 'ms as written',
      comparable: 'same',
      note: "GuideLLM's inter_token_latency_ms is (last token − first token) / (output tokens − 1): loadfleet's TPOT; GuideLLM's own time_per_output_token_ms includes the first token (loadfleet's NTPOT) and is not used",
    },
    {
      figure: 'e2e',
      source: at('request_latency', 'request_latency'),
      conversion: 's × 1000',
      comparable: 'same',
      note: 'request start to request end',
    },
    {
      figure: 'itl',
      source: null,
      conversion: '–',
      comparable: 'absent',
      note: 'GuideLLM keeps no gaps between chunks, only the per-request average above: loadfleet ITL has no baseline',
    },
    {
      figure: 'success_rate',
      source: perRequest ? '$.benchmarks[k].requests.{successful,errored}' : '$.benchmarks[k].metrics.request_totals',
      conversion: 'share',
      comparable: 'same',
      note: 'successful / (successful + errored); incomplete requests (cut by the end of the benchmark) are left out on both counts',
    },
  ];
}

function quantiles(summary: Record<string, unknown> | null, path: string, p: Problems, scale: number): Map<number, number> | null {
  if (!summary) return null;
  const out = new Map<number, number>();
  const pct = p.obj(summary.percentiles, `${path}.percentiles`);
  for (const [k, q] of Object.entries(QUANTILES)) {
    const v = p.num(pct?.[k], `${path}.percentiles.${k}`, true);
    if (v !== null) out.set(q, v * scale);
  }
  const max = p.num(summary.max, `${path}.max`, true);
  if (max !== null) out.set(1, max * scale);
  return out;
}

/** The baseline from benchmark `index` (needed when the report holds several), or the problems. */
export function readGuidellm(doc: Record<string, unknown>, index: number | undefined): ForeignBaseline | { problems: string[] } {
  const p = new Problems();
  const list = doc.benchmarks as unknown[];
  if (index === undefined && list.length > 1)
    return {
      problems: [`$.benchmarks: ${list.length} benchmarks; choose one with --baseline-benchmark N (${guidellmBenchmarks(doc).join('; ')})`],
    };
  const k = index ?? 0;
  const b = p.obj(list[k], `$.benchmarks[${k}]`);
  if (!b) return { problems: p.list.length ? p.list : [`$.benchmarks[${k}]: no such benchmark (0–${list.length - 1})`] };
  const at = `$.benchmarks[${k}]`;
  const metrics = p.obj(b.metrics, `${at}.metrics`);
  const succ = (name: string, optional = false) => {
    const m = p.obj(metrics?.[name], `${at}.metrics.${name}`, optional);
    return m ? p.obj(m.successful, `${at}.metrics.${name}.successful`) : null;
  };
  const ttftField = metrics?.time_to_first_output_token_ms ? 'time_to_first_output_token_ms' : 'time_to_first_token_ms';
  const aggregate: ForeignBaseline['aggregate'] = {};
  const put = (m: BaselineMetric, name: string, scale: number) => {
    const q = quantiles(succ(name), `${at}.metrics.${name}.successful`, p, scale);
    if (q && q.size > 0) aggregate[m] = q;
  };
  put('ttft', ttftField, 1);
  put('tpot', 'inter_token_latency_ms', 1);
  put('e2e', 'request_latency', 1000);
  const totals = p.obj(metrics?.request_totals, `${at}.metrics.request_totals`);
  const okCount = p.num(totals?.successful, `${at}.metrics.request_totals.successful`);
  const errCount = p.num(totals?.errored, `${at}.metrics.request_totals.errored`);
  const incomplete = p.num(totals?.incomplete, `${at}.metrics.request_totals.incomplete`, true);
  const reqs = p.obj(b.requests, `${at}.requests`, true);
  const successful = reqs ? p.arr(reqs.successful, `${at}.requests.successful`, true) : null;
  const errored = reqs ? p.arr(reqs.errored, `${at}.requests.errored`, true) : null;
  let requests: ForeignRequest[] | null = null;
  const limits: string[] = [];
  if (successful && successful.length > 0) {
    requests = [];
    const one = (r: unknown, path: string, ok: boolean): ForeignRequest | null => {
      const o = p.obj(r, path);
      if (!o) return null;
      const timings = ((o.info as Record<string, unknown> | undefined)?.timings ?? {}) as Record<string, unknown>;
      const start = timings.targeted_start ?? o.request_start_time ?? timings.request_start ?? o.start_time;
      const when = p.num(start, `${path}.request_start_time`);
      if (!ok) return { at: when, ok, ttft: null, tpot: null, e2e: null };
      const ttft = p.num(o[ttftField] ?? o.time_to_first_token_ms, `${path}.${ttftField}`);
      const tpot = p.num(o.inter_token_latency_ms, `${path}.inter_token_latency_ms`, true);
      const e2e = p.num(o.request_latency, `${path}.request_latency`);
      return { at: when, ok, ttft, tpot, e2e: e2e === null ? null : e2e * 1000 };
    };
    successful.forEach((r, i) => {
      const x = one(r, `${at}.requests.successful[${i}]`, true);
      if (x) requests!.push(x);
    });
    (errored ?? []).forEach((r, i) => {
      const x = one(r, `${at}.requests.errored[${i}]`, false);
      if (x) requests!.push(x);
    });
    requests.sort((x, y) => (x.at ?? 0) - (y.at ?? 0));
    if (okCount !== null && successful.length < okCount)
      limits.push(
        `GuideLLM kept ${successful.length} of ${okCount} successful requests (a sample): the comparison reads the sample, in send order, and its intervals are those of ${requests.length} requests`,
      );
  } else if (Object.keys(aggregate).length === 0) {
    p.add(`${at}.metrics`, 'no latency distribution (time_to_first_token_ms, inter_token_latency_ms, request_latency) and no requests');
  }
  if (p.list.length > 0) return { problems: p.list };
  const config = (b.config ?? {}) as Record<string, unknown>;
  const md = (doc.metadata ?? {}) as Record<string, unknown>;
  return {
    format: 'guidellm',
    ttftEnds: ttftField === 'time_to_first_output_token_ms' ? 'first_content' : 'first_output',
    tool: 'GuideLLM',
    version: typeof md.guidellm_version === 'string' ? md.guidellm_version : null,
    data: requests ? 'per-request' : 'aggregate',
    order: requests ? 'send-time' : null,
    requests,
    itlGaps: null,
    aggregate,
    total: requests ? requests.length : okCount! + errCount!,
    failed: requests ? requests.filter((r) => !r.ok).length : errCount,
    excluded: incomplete ? { count: incomplete, why: 'incomplete: cut by the end of the benchmark' } : null,
    figures: figures(requests !== null, ttftField),
    load: { benchmark: k, strategy: config.strategy ?? null, profile: config.profile ?? null, duration_s: b.duration ?? null },
    limits: requests
      ? limits
      : [
          "GuideLLM's percentiles come from its own distribution summary (a cumulative distribution read at each quantile), close to but not exactly loadfleet's nearest rank",
        ],
  };
}
