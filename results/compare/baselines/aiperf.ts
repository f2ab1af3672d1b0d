// Pure: an AIPerf profile export as a baseline: profile_export.jsonl (one record per request:
// metadata with wall-clock ns stamps and the benchmark phase, metrics as {value, unit}, error or
// null) or profile_export_aiperf.json (one object per metric: unit, avg, p1…p99, min, max, std).
import type { BaselineMetric, FigureSource, ForeignBaseline, ForeignRequest } from './types.js';
import { Problems, toMsFactor } from './types.js';

const AGG_QUANTILES: Record<string, number> = {
  p1: 0.01,
  p5: 0.05,
  p10: 0.1,
  p25: 0.25,
  p50: 0.5,
  p75: 0.75,
  p90: 0.9,
  p95: 0.95,
  p99: 0.99,
  max: 1,
};
const TAGS: Record<BaselineMetric, string> = {
  ttft: 'time_to_first_token',
  tpot: 'inter_token_latency',
  e2e: 'request_latency',
  itl: 'inter_chunk_latency',
};

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Whether a parsed document looks like AIPerf's aggregate export. */
export function looksLikeAiperfAggregate(doc: unknown): boolean {
  if (!isObj(doc)) return false;
  const m = doc.request_latency ?? doc.time_to_first_token;
  return isObj(m) && typeof m.unit === 'string' && 'avg' in m;
}

/** Whether parsed JSONL lines look like AIPerf's per-record export. */
export function looksLikeAiperfRecords(lines: unknown): boolean {
  return (
    Array.isArray(lines) &&
    lines.length > 0 &&
    isObj(lines[0]) &&
    isObj(lines[0].metadata) &&
    'request_start_ns' in lines[0].metadata &&
    isObj(lines[0].metrics)
  );
}

function figures(perRequest: boolean): FigureSource[] {
  const at = (tag: string) => (perRequest ? `$[i].metrics.${tag}.value` : `$.${tag}.{p50,p90,p95,p99,max}`);
  const conv = 'by the stated unit (ms as AIPerf writes it; ns, us, s converted)';
  return [
    {
      figure: 'ttft',
      source: at(TAGS.ttft),
      conversion: conv,
      comparable: 'close',
      note: 'first response carrying a token after the request was sent; reasoning tokens count (loadfleet TTFO) when the model reasons',
    },
    {
      figure: 'tpot',
      source: at(TAGS.tpot),
      conversion: conv,
      comparable: 'same',
      note: "AIPerf's inter_token_latency is (request latency − TTFT) / (output tokens − 1): loadfleet's TPOT",
    },
    { figure: 'e2e', source: at(TAGS.e2e), conversion: conv, comparable: 'same', note: 'request sent to the last response received' },
    {
      figure: 'itl',
      source: at(TAGS.itl),
      conversion: conv,
      comparable: 'same',
      note: "AIPerf's inter_chunk_latency: gaps between consecutive streamed responses, as loadfleet's ITL",
    },
    {
      figure: 'success_rate',
      source: perRequest ? '$[i].error (null: success)' : '$.request_count.avg / ($.request_count.avg + $.error_request_count.avg)',
      conversion: 'share',
      comparable: 'same',
      note: 'a request with an error record counts as failed',
    },
  ];
}

/** A {value, unit} metric in ms, or null (absent); a problem when malformed. */
function metricMs(v: unknown, path: string, p: Problems): number | number[] | null {
  if (v === undefined || v === null) return null;
  if (!isObj(v)) {
    p.add(path, 'expected {value, unit}');
    return null;
  }
  const f = toMsFactor(v.unit);
  if (f === null) {
    p.add(`${path}.unit`, `expected a time unit (ns, us, ms, s), got ${JSON.stringify(v.unit)}`);
    return null;
  }
  if (Array.isArray(v.value)) return v.value.map((x, j) => (p.num(x, `${path}.value[${j}]`) ?? 0) * f);
  const x = p.num(v.value, `${path}.value`);
  return x === null ? null : x * f;
}

/** The baseline from profile_export.jsonl's records, or the problems. */
export function readAiperfRecords(lines: unknown[]): ForeignBaseline | { problems: string[] } {
  const p = new Problems();
  const requests: ForeignRequest[] = [];
  const gaps: number[] = [];
  let excluded = 0;
  lines.forEach((line, i) => {
    const o = p.obj(line, `$[${i}]`);
    const md = o ? p.obj(o.metadata, `$[${i}].metadata`) : null;
    const metrics = o ? p.obj(o.metrics, `$[${i}].metrics`) : null;
    if (!o || !md || !metrics) return;
    const start = md.request_start_ns;
    const at = typeof start === 'number' || typeof start === 'bigint' ? Number(start) : null;
    if (at === null) p.add(`$[${i}].metadata.request_start_ns`, `expected an integer (ns), got ${JSON.stringify(start)}`);
    if ((md.benchmark_phase !== undefined && md.benchmark_phase !== 'profiling') || md.was_cancelled === true) {
      excluded++;
      return;
    }
    const ok = o.error === null || o.error === undefined;
    const ms = (m: BaselineMetric) => metricMs(metrics[TAGS[m]], `$[${i}].metrics.${TAGS[m]}`, p);
    const ttft = ms('ttft');
    const tpot = ms('tpot');
    const e2e = ms('e2e');
    const itl = ms('itl');
    if (ok && typeof e2e !== 'number') p.add(`$[${i}].metrics.${TAGS.e2e}`, 'missing on a successful record');
    if (ok && Array.isArray(itl)) gaps.push(...itl);
    const scalar = (x: number | number[] | null) => (ok && typeof x === 'number' ? x : null);
    requests.push({ at, ok, ttft: scalar(ttft), tpot: scalar(tpot), e2e: scalar(e2e) });
  });
  if (lines.length > 0 && requests.length === 0 && p.list.length === 0)
    p.add('$', 'no profiling record (every record is warm-up or cancelled)');
  if (p.list.length > 0) return { problems: p.list };
  requests.sort((x, y) => (x.at ?? 0) - (y.at ?? 0));
  return {
    format: 'aiperf',
    ttftEnds: 'first_output',
    tool: 'AIPerf',
    version: null,
    data: 'per-request',
    order: 'send-time',
    requests,
    itlGaps: gaps.length > 0 ? gaps : null,
    aggregate: {},
    total: requests.length,
    failed: requests.filter((r) => !r.ok).length,
    excluded: excluded > 0 ? { count: excluded, why: 'warm-up phase or cancelled' } : null,
    figures: figures(true),
    load: {},
    limits: [],
  };
}

/** The baseline from profile_export_aiperf.json, or the problems. */
export function readAiperfAggregate(doc: Record<string, unknown>): ForeignBaseline | { problems: string[] } {
  const p = new Problems();
  const aggregate: ForeignBaseline['aggregate'] = {};
  for (const [m, tag] of Object.entries(TAGS) as [BaselineMetric, string][]) {
    const o = p.obj(doc[tag], `$.${tag}`, true);
    if (!o) continue;
    const f = toMsFactor(o.unit);
    if (f === null) {
      p.add(`$.${tag}.unit`, `expected a time unit (ns, us, ms, s), got ${JSON.stringify(o.unit)}`);
      continue;
    }
    const q = new Map<number, number>();
    for (const [k, quantile] of Object.entries(AGG_QUANTILES)) {
      const v = p.num(o[k], `$.${tag}.${k}`, true);
      if (v !== null) q.set(quantile, v * f);
    }
    if (q.size > 0) aggregate[m] = q;
  }
  const count = (tag: string, optional: boolean) => {
    const o = p.obj(doc[tag], `$.${tag}`, optional);
    return o ? p.num(o.avg, `$.${tag}.avg`) : null;
  };
  const ok = count('request_count', false);
  const failed = count('error_request_count', true) ?? 0;
  if (Object.keys(aggregate).length === 0) p.add('$', `no latency metric (${Object.values(TAGS).join(', ')})`);
  if (p.list.length > 0) return { problems: p.list };
  const cfg = isObj(doc.input_config) ? doc.input_config : {};
  return {
    format: 'aiperf',
    ttftEnds: 'first_output',
    tool: 'AIPerf',
    // Newer exports state their own schema version (schema_version), not AIPerf's.
    version:
      typeof doc.aiperf_version === 'string'
        ? doc.aiperf_version
        : typeof doc.schema_version === 'string'
          ? `export schema ${doc.schema_version}`
          : null,
    data: 'aggregate',
    order: null,
    requests: null,
    itlGaps: null,
    aggregate,
    total: ok === null ? null : ok + failed,
    failed,
    excluded: null,
    figures: figures(false),
    load: { loadgen: cfg.loadgen ?? null, start_time: doc.start_time ?? null, end_time: doc.end_time ?? null },
    limits: [],
  };
}
