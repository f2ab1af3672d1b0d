// The bounded summary (what the scraper keeps now) against the reference path (every record held,
// then serverBlock / fairnessPriorities / writeServerScrapesCsv over them): on the same scrapes
// the server block, the fairness ids seen and server-scrapes.csv must be the same to the byte —
// for synthetic records completing out of order across sources, and for a real Scraper against
// loopback servers whose expositions change every scrape (one of them slow, so completions
// interleave).
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fairnessPriorities } from '../../figures/server/derive.js';
import { parseExposition } from '../../figures/server/prom-parse.js';
import { serverBlock, toSamples } from '../../figures/server/server-block.js';
import { ScrapeSummary } from '../../figures/server/summary.js';
import type { ScrapeRecord, SourceResult } from '../../figures/server/types.js';
import { anchoredClock } from '../../shared/clock.js';
import type { Plan } from '../../shared/plan.js';
import { Scraper } from './scraper.js';
import { writeServerScrapesCsv } from './server-scrapes-csv.js';

const PLAN = {
  schema: 'loadfleet.plan/v1',
  name: 'eq',
  seed: 1,
  duration_s: 3,
  classes: [
    { name: 'rt', headers: { 'x-gateway-inference-fairness-id': 'tenant-a' } },
    { name: 'bulk', headers: { 'X-LLM-D-Inference-Fairness-Id': 'tenant-b' } },
    { name: 'anon', headers: {} },
  ],
  windows: [
    { name: 'early', start_s: 0, end_s: 1.2 },
    { name: 'late', start_s: 1.2, end_s: 2.6 },
  ],
} as unknown as Plan;

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An exposition of scrape `n` of a source: engine gauges and counters, gateway flow control, restarts, NaN, old names. */
function exposition(kind: 'vllm' | 'epp' | 'old', n: number, r: () => number): string {
  const lines: string[] = [];
  const start = n > 7 && r() < 0.5 ? 2000 : 1000; // a restart part-way
  lines.push(`process_start_time_seconds ${start}`);
  if (kind === 'vllm' || kind === 'old') {
    const pre = kind === 'old' ? 'vllm:gpu_cache_usage_perc' : 'vllm:kv_cache_usage_perc';
    lines.push('# TYPE vllm:num_requests_running gauge');
    for (const m of ['a', 'b']) lines.push(`vllm:num_requests_running{model_name="${m}"} ${Math.floor(r() * 9)}`);
    lines.push(`vllm:num_requests_waiting ${r() < 0.1 ? 'NaN' : Math.floor(r() * 5)}`);
    lines.push(`${pre} ${(r() * 0.9).toFixed(4)}`);
    lines.push(`${kind === 'old' ? 'vllm:num_preemptions' : 'vllm:num_preemptions_total'} ${n * 2 + Math.floor(r() * 3)}`);
    lines.push(`vllm:prefix_cache_queries_total ${n * 100 + 0.5}`);
    lines.push(`vllm:prefix_cache_hits_total ${n * 40 + Math.floor(r() * 7)}`);
    lines.push(`vllm:spec_decode_num_drafts_total ${n * 10}`);
    lines.push(`vllm:spec_decode_num_draft_tokens_total ${n * 30}`);
    lines.push(`vllm:spec_decode_num_accepted_tokens_total ${n * 17 + Math.floor(r() * 5)}`);
  } else {
    lines.push('# TYPE llm_d_epp_flow_control_request_queue_duration_seconds histogram');
    lines.push(`llm_d_epp_flow_control_pool_saturation{pool="p"} ${(r() * 1.3).toFixed(3)}`);
    for (const [id, prio] of [
      ['tenant-a', '100'],
      ['tenant-b', '-10'],
      ['tenant-c', undefined],
    ] as const) {
      if (n < 2 && id === 'tenant-b') continue; // a fairness id that appears later
      const labels = prio === undefined ? `fairness_id="${id}"` : `fairness_id="${id}",priority="${prio}"`;
      lines.push(`llm_d_epp_flow_control_queue_size{${labels}} ${Math.floor(r() * 4)}`);
      lines.push(`llm_d_epp_flow_control_request_queue_duration_seconds_count{${labels}} ${n * 3 + Math.floor(r() * 2)}`);
      lines.push(`llm_d_epp_flow_control_request_queue_duration_seconds_sum{${labels}} ${(n * 0.37 + r() * 0.01).toFixed(6)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function record(
  source: string,
  kind: ScrapeRecord['kind'],
  tick: number | null,
  startNs: bigint,
  text: string | null,
  r: () => number,
): ScrapeRecord {
  const parsed = text === null ? null : parseExposition(text);
  return {
    source,
    kind,
    tick,
    startUnixNs: startNs + 5n,
    elapsedS: 0,
    lagMs: kind === 'tick' ? Math.round(r() * 5000) / 1000 : null,
    durationMs: Math.round(r() * 9000) / 1000,
    httpStatus: text === null ? null : 200,
    error: text === null ? { kind: r() < 0.5 ? 'timeout' : 'unreachable', message: 'no answer, "quoted", with a comma' } : null,
    series: parsed?.samples ?? null,
    families: new Set(parsed?.types.keys() ?? []),
  };
}

describe('ScrapeSummary against the reference path', () => {
  it('gives the same server block and fairness ids for synthetic scrapes completing out of order', () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const r = rng(seed);
      const names = ['vllm', 'epp', 'old'] as const;
      const results: SourceResult[] = names.map((name) => ({
        name,
        url: `http://x/${name}`,
        intervalS: 0.1,
        records: [],
        skippedTicks: 0,
      }));
      const sum = new ScrapeSummary(
        PLAN,
        results.map((s) => ({ name: s.name, url: s.url, intervalS: s.intervalS })),
      );
      const runStart = 1_000_000_000n;
      const started = new Map<number, { startNs: bigint; kind: ScrapeRecord['kind']; tick: number | null; n: number }>();
      let n = 0;
      // Events: a scrape of a source starts (with a jittered start time), later it finishes.
      let now = runStart - 300_000_000n;
      const steps: [number, ScrapeRecord['kind'], number | null][] = [];
      for (let i = 0; i < 3; i++) steps.push([i, 'pre', null]);
      for (let k = 0; k < 30; k++) for (let i = 0; i < 3; i++) steps.push([i, 'tick', k]);
      for (let i = 0; i < 3; i++) steps.push([i, 'post', null]);
      let ranStart = false;
      const finish = (i: number) => {
        const st = started.get(i)!;
        started.delete(i);
        const text = r() < 0.12 ? null : exposition(names[i]!, st.n, r);
        const rec = record(names[i]!, st.kind, st.tick, st.startNs, text, r);
        results[i]!.records.push(rec);
        sum.add(i, rec, st.startNs);
      };
      for (const [i, kind, tick] of steps) {
        if (!ranStart && kind === 'tick') {
          while (started.size > 0) finish([...started.keys()][0]!);
          sum.setRunStart(runStart);
          ranStart = true;
        }
        if (started.has(i)) finish(i);
        // Now and then the same start time as the scrape before (another source): ties keep source order.
        if (r() >= 0.05) now += BigInt(1 + Math.floor(r() * 40_000_000));
        started.set(i, { startNs: now, kind, tick, n: n++ });
        sum.begin(i, now);
        if (r() < 0.1) {
          results[i]!.skippedTicks++;
          sum.skipped(i, 1);
        }
        // Finish a random other scrape in flight, so completion order differs from start order.
        if (r() < 0.6 && started.size > 1) finish([...started.keys()][Math.floor(r() * started.size)]!);
      }
      while (started.size > 0) finish([...started.keys()][0]!);
      for (const s of results) for (const rec of s.records) rec.elapsedS = Number(rec.startUnixNs - 5n - runStart) / 1e9;
      const want = serverBlock(PLAN, results);
      expect(JSON.stringify(sum.block()), `seed ${seed}`).toBe(JSON.stringify(want));
      const seen = (m: Map<string, Set<string>>) => JSON.stringify([...m].map(([k, v]) => [k, [...v]]));
      expect(seen(sum.fairnessPriorities())).toBe(seen(fairnessPriorities(toSamples(results.flatMap((s) => s.records)))));
      // The figures under test are not all null: the comparison has something to compare.
      expect((want.windows.all as Record<string, unknown>).rt_epp_queue_mean_ms).not.toBeNull();
      expect((want.windows.late as Record<string, unknown>).max_vllm_running).not.toBeNull();
    }
  });
});

let vllm: Server;
let epp: Server;
let base = '';
let eppBase = '';

beforeAll(async () => {
  const counts = { vllm: 0, epp: 0, old: 0 };
  const rv = rng(42);
  vllm = createServer((req, res) => {
    const kind = req.url === '/old' ? 'old' : 'vllm';
    res.end(exposition(kind, counts[kind]++, rv));
  });
  const re = rng(43);
  // The gateway answers slowly now and then, so scrapes of the others finish while it is in flight.
  epp = createServer((_req, res) => {
    const text = exposition('epp', counts.epp++, re);
    setTimeout(() => res.end(text), re() < 0.5 ? 70 : 1);
  });
  await new Promise<void>((r) => vllm.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => epp.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(vllm.address() as AddressInfo).port}`;
  eppBase = `http://127.0.0.1:${(epp.address() as AddressInfo).port}`;
});

afterAll(() => {
  for (const s of [vllm, epp]) {
    s.closeAllConnections();
    s.close();
  }
});

describe('Scraper: streamed and bounded against the reference path', () => {
  it('writes the same server-scrapes.csv and server block as the records it would have held', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scrape-eq-'));
    const clock = anchoredClock();
    const targets = [
      { name: 'vllm', url: `${base}/metrics`, interval_s: 0.05 },
      { name: 'epp', url: `${eppBase}/metrics`, interval_s: 0.1 },
      { name: 'old', url: `${base}/old`, interval_s: 0.07 },
      { name: 'down', url: 'http://127.0.0.1:1/metrics', interval_s: 0.2 },
    ];
    const s = new Scraper(targets, dir, clock, { plan: PLAN, keepRecords: true });
    await s.snapshot('pre');
    const start = clock.nowNs() + 20_000_000n;
    s.setRunStart(start, 123_456n);
    s.start(start);
    await new Promise((r) => setTimeout(r, 2800));
    await s.stop();
    await s.snapshot('post');
    await s.close();
    const results = s.results();
    expect(results[0]!.records.length).toBeGreaterThan(30);
    expect(JSON.stringify(s.summary().block())).toBe(JSON.stringify(serverBlock(PLAN, results)));
    const seen = (m: Map<string, Set<string>>) => JSON.stringify([...m].map(([k, v]) => [k, [...v]]));
    expect(seen(s.summary().fairnessPriorities())).toBe(seen(fairnessPriorities(toSamples(results.flatMap((x) => x.records)))));
    await writeServerScrapesCsv(join(dir, 'reference.csv'), results);
    expect(readFileSync(join(dir, 'server-scrapes.csv'), 'utf8')).toBe(readFileSync(join(dir, 'reference.csv'), 'utf8'));
  });
});
