// Test kit: a real loadfleet run's requests written out as each other tool would have recorded
// them (vLLM bench serve, GuideLLM, AIPerf), field for field as those tools' schemas name them
// (see test/fixtures/baselines/README.md), so `compare` can be tried against every baseline kind
// with values a real server produced. Only what the run measured is written: there are no
// per-chunk gaps in requests.ndjson, so no ITL lists are made up.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRequests } from './harness.js';

interface Req {
  startS: number;
  ok: boolean;
  ttftS: number;
  e2eS: number;
  tpotS: number | null;
  out: number;
  inLen: number;
}

function requestsOf(runDir: string): Req[] {
  const s = (a: unknown, b: unknown) => (a === null || b === null ? 0 : Number(BigInt(a as bigint) - BigInt(b as bigint)) / 1e9);
  return readRequests(runDir)
    .map((r) => {
      const ok = r.status === 'ok';
      const out = ok ? Number(r.completion_tokens ?? 0) : 0;
      // These tools stamp their TTFT at the first token of any kind, reasoning included: loadfleet's first output.
      const ttftS = ok ? s(r.first_output_unix_ns, r.sent_unix_ns) : 0;
      const e2eS = ok ? s(r.done_unix_ns, r.sent_unix_ns) : 0;
      return {
        startS: Number(BigInt(r.sent_unix_ns)) / 1e9,
        ok,
        ttftS,
        e2eS,
        tpotS: ok && out > 1 ? (e2eS - ttftS) / (out - 1) : null,
        out,
        inLen: Number(r.prompt_tokens ?? 0),
      };
    })
    .sort((a, b) => a.startS - b.startS);
}

/** numpy.percentile's default (linear between ranks), as vLLM reports. */
function linear(sorted: readonly number[], pct: number): number {
  const h = (sorted.length - 1) * (pct / 100);
  const lo = Math.floor(h);
  return sorted[lo]! + (h - lo) * ((sorted[Math.min(lo + 1, sorted.length - 1)] ?? sorted[lo]!) - sorted[lo]!);
}

const sortedOk = (rs: readonly Req[], f: (r: Req) => number | null) =>
  rs
    .filter((r) => r.ok)
    .map(f)
    .filter((v): v is number => v !== null)
    .sort((a, b) => a - b);

function vllm(rs: Req[], detailed: boolean): Record<string, unknown> {
  const ok = rs.filter((r) => r.ok);
  const dur = Math.max(...rs.map((r) => r.startS + r.e2eS)) - rs[0]!.startS;
  const doc: Record<string, unknown> = {
    date: '20261204-233000',
    endpoint_type: 'openai-chat',
    backend: 'openai-chat',
    model_id: 'engine-sim',
    num_prompts: rs.length,
    request_rate: 3,
    burstiness: 1,
    max_concurrency: null,
    duration: dur,
    completed: ok.length,
    failed: rs.length - ok.length,
    total_input_tokens: ok.reduce((s, r) => s + r.inLen, 0),
    total_output_tokens: ok.reduce((s, r) => s + r.out, 0),
    request_throughput: ok.length / dur,
  };
  for (const [name, f] of [
    ['ttft', (r: Req) => r.ttftS],
    ['tpot', (r: Req) => r.tpotS],
    ['e2el', (r: Req) => r.e2eS],
  ] as const) {
    const v = sortedOk(rs, f);
    doc[`median_${name}_ms`] = linear(v, 50) * 1000;
    for (const p of [50, 95, 99]) doc[`p${p}_${name}_ms`] = linear(v, p) * 1000;
  }
  if (detailed)
    Object.assign(doc, {
      input_lens: rs.map((r) => r.inLen),
      output_lens: rs.map((r) => r.out),
      ttfts: rs.map((r) => r.ttftS),
      latencies: rs.map((r) => r.e2eS),
      start_times: rs.map((r) => r.startS),
      errors: rs.map((r) => (r.ok ? '' : 'Service Unavailable')),
    });
  return doc;
}

function guidellmDist(v: readonly number[]) {
  const q = (p: number) => v[Math.max(0, Math.ceil(p * v.length) - 1)]!;
  const keys = { p001: 0.001, p01: 0.01, p05: 0.05, p10: 0.1, p25: 0.25, p50: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99, p999: 0.999 };
  return {
    successful: {
      mean: v.reduce((s, x) => s + x, 0) / v.length,
      median: q(0.5),
      min: v[0],
      max: v.at(-1),
      count: v.length,
      percentiles: Object.fromEntries(Object.entries(keys).map(([k, p]) => [k, q(p)])),
    },
  };
}

function guidellm(rs: Req[], withRequests: boolean): Record<string, unknown> {
  const one = (r: Req) => ({
    request_id: String(r.startS),
    request_start_time: r.startS,
    request_end_time: r.startS + r.e2eS,
    request_latency: r.ok ? r.e2eS : null,
    output_tokens: r.ok ? r.out : null,
    time_to_first_token_ms: r.ok ? r.ttftS * 1000 : null,
    inter_token_latency_ms: r.tpotS === null ? null : r.tpotS * 1000,
  });
  const ok = rs.filter((r) => r.ok);
  return {
    metadata: { version: 2, guidellm_version: '0.7.3' },
    config: {},
    benchmarks: [
      {
        type_: 'generative_benchmark',
        config: { strategy: { type_: 'constant', rate: 3 } },
        metrics: {
          request_totals: { successful: ok.length, errored: rs.length - ok.length, incomplete: 0, total: rs.length },
          time_to_first_token_ms: guidellmDist(sortedOk(rs, (r) => r.ttftS * 1000)),
          inter_token_latency_ms: guidellmDist(sortedOk(rs, (r) => (r.tpotS === null ? null : r.tpotS * 1000))),
          request_latency: guidellmDist(sortedOk(rs, (r) => r.e2eS)),
        },
        requests: withRequests
          ? { successful: ok.map(one), errored: rs.filter((r) => !r.ok).map(one), incomplete: [] }
          : { successful: [], errored: [], incomplete: [] },
      },
    ],
  };
}

function aiperfRecords(rs: Req[]): string {
  const ms = (v: number) => ({ value: v * 1000, unit: 'ms' });
  return `${rs
    .map((r, i) =>
      JSON.stringify({
        metadata: {
          session_num: i,
          request_start_ns: Math.round(r.startS * 1e9),
          request_end_ns: Math.round((r.startS + r.e2eS) * 1e9),
          worker_id: 'worker_0',
          record_processor_id: 'rp_0',
          benchmark_phase: 'profiling',
          was_cancelled: false,
        },
        metrics: r.ok
          ? {
              time_to_first_token: ms(r.ttftS),
              request_latency: ms(r.e2eS),
              ...(r.tpotS === null ? {} : { inter_token_latency: ms(r.tpotS) }),
            }
          : {},
        error: r.ok ? null : { code: 503, type: 'Service Unavailable', message: 'Service Unavailable' },
      }),
    )
    .join('\n')}\n`;
}

function aiperfAggregate(rs: Req[]): Record<string, unknown> {
  const stat = (v: readonly number[]) => {
    const q = (p: number) => v[Math.max(0, Math.ceil(p * v.length) - 1)]! * 1000;
    return {
      unit: 'ms',
      avg: (v.reduce((s, x) => s + x, 0) / v.length) * 1000,
      p50: q(0.5),
      p90: q(0.9),
      p95: q(0.95),
      p99: q(0.99),
      min: v[0]! * 1000,
      max: v.at(-1)! * 1000,
    };
  };
  const ok = rs.filter((r) => r.ok).length;
  return {
    time_to_first_token: stat(sortedOk(rs, (r) => r.ttftS)),
    inter_token_latency: stat(sortedOk(rs, (r) => r.tpotS)),
    request_latency: stat(sortedOk(rs, (r) => r.e2eS)),
    request_count: { unit: 'requests', avg: ok },
    error_request_count: { unit: 'requests', avg: rs.length - ok },
  };
}

/** Every kind of baseline file, made from runDir's requests, in dir; returns kind → path. */
export function writeForeignBaselines(runDir: string, dir: string): Record<string, string> {
  const rs = requestsOf(runDir);
  const files: Record<string, [string, string]> = {
    'vllm-detailed': ['vllm-detailed.json', JSON.stringify(vllm(rs, true))],
    'vllm-aggregate': ['vllm.json', JSON.stringify(vllm(rs, false))],
    'guidellm-requests': ['guidellm-requests.json', JSON.stringify(guidellm(rs, true))],
    'guidellm-aggregate': ['guidellm-aggregate.json', JSON.stringify(guidellm(rs, false))],
    'aiperf-records': ['profile_export.jsonl', aiperfRecords(rs)],
    'aiperf-aggregate': ['profile_export_aiperf.json', JSON.stringify(aiperfAggregate(rs))],
  };
  return Object.fromEntries(
    Object.entries(files).map(([kind, [name, text]]) => {
      writeFileSync(join(dir, name), text);
      return [kind, join(dir, name)];
    }),
  );
}
