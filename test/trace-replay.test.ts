// Trace replay end to end: a Mooncake-format trace of 300 rows with shared hash ids, replayed by
// 3 agents and by 1 against engine-sim with prefix caching (16-token blocks). Every row must be
// sent exactly once at its scaled time, with exactly its lengths, and engine-sim's prefix-cache
// hit ratio must match what the hash ids imply (shared/prefix-implied.ts states the arithmetic).
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { WorkloadPromptBuilder } from '../agent/workload-prompt.js';
import { mooncakeJsonl, synthMooncake } from '../scripts/trace-synth.js';
import type { Plan } from '../shared/plan.js';
import { impliedPrefixHits } from '../shared/prefix-implied.js';
import { buildSchedule } from '../shared/schedule.js';
import { attachWorkloadInputs } from '../shared/workload-files.js';
import { blockHashes } from '../sim/kv-cache.js';
import { tokenIds } from '../sim/tokenizer.js';
import { onlyRunDir, readRequests, readRunJson, runCoordinator, startSim, tempDir, writePlan } from './harness.js';

const TIME_SCALE = 0.8;
const ROWS = synthMooncake({ rows: 300, seed: 3, ratePerS: 15 });

function plan(baseUrl: string, traceFile: string): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: 'e2e-trace',
    seed: 5,
    duration_s: Math.ceil((ROWS.at(-1)!.timestamp * TIME_SCALE) / 1000) + 1,
    drain_timeout_s: 30,
    target: { base_url: baseUrl, api: 'chat', model: 'loadfleet-sim', timeout_s: 60 },
    scrape: [{ name: 'vllm', url: `${new URL(baseUrl).origin}/metrics`, interval_s: 1 }],
    classes: [
      {
        name: 'trace',
        prompt: {},
        load: { model: 'trace', phases: [], trace: { file: traceFile, format: 'mooncake', time_scale: TIME_SCALE } },
      },
    ],
  };
}

// engine-sim's prefix-cache counters (tokens), read from its /metrics after the run.
async function prefixCounters(baseUrl: string): Promise<{ hits: number; queries: number }> {
  const text = await (await fetch(`${new URL(baseUrl).origin}/metrics`)).text();
  const value = (name: string): number => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)![1]);
  return { hits: value('vllm:prefix_cache_hits_total'), queries: value('vllm:prefix_cache_queries_total') };
}

describe('trace replay: Mooncake rows over 3 agents and 1', () => {
  const work = tempDir();
  const traceFile = join(work, 'trace.jsonl');
  const runs: { run: any; rows: any[]; counters: { hits: number; queries: number } }[] = [];
  const implied = impliedPrefixHits(
    ROWS.map((r) => ({ input_tokens: r.input_length, hash_ids: r.hash_ids })),
    512,
  );

  beforeAll(async () => {
    writeFileSync(traceFile, mooncakeJsonl(ROWS));
    for (const agents of [3, 1]) {
      // A fresh engine-sim per run, so its counters and cache hold this run only.
      const sim = await startSim(['--enable-prefix-caching']);
      try {
        const out = join(work, `n${agents}`);
        const file = writePlan(work, plan(sim.baseUrl, 'trace.jsonl'), `plan-${agents}.json`);
        const r = await runCoordinator(['--agents', String(agents), '--plan', file, '--out', out, '--quiet']);
        expect(r.code, r.stderr).toBe(0);
        const dir = onlyRunDir(out);
        runs.push({ run: readRunJson(dir), rows: readRequests(dir), counters: await prefixCounters(sim.baseUrl) });
      } finally {
        sim.stop();
      }
    }
  });

  it('sends every row exactly once, request_index = row index, on both fleets', () => {
    for (const { rows } of runs) {
      expect(rows).toHaveLength(ROWS.length);
      expect(rows.map((r) => r.request_index).sort((a, b) => a - b)).toEqual(ROWS.map((_, i) => i));
    }
  });

  it('intends each row at its scaled timestamp, to the µs', () => {
    for (const { run, rows } of runs) {
      const start = BigInt(run.started_at_unix_ns);
      let worstNs = 0;
      for (const r of rows) {
        const want = Math.round(ROWS[r.request_index]!.timestamp * TIME_SCALE * 1e6);
        worstNs = Math.max(worstNs, Math.abs(Number(BigInt(r.intended_unix_ns) - start) - want));
      }
      console.log(`${run.agents.length} agent(s): worst |intended − scaled row time| ${worstNs} ns over ${rows.length} rows`);
      expect(worstNs).toBeLessThan(1000);
    }
  });

  it('asks for exactly each row’s lengths: prompt_tokens = input_length, completion_tokens = output_length', () => {
    for (const { rows } of runs) {
      const ok = rows.filter((r) => r.status === 'ok');
      expect(ok.length).toBe(ROWS.length);
      for (const r of ok) {
        expect(r.prompt_tokens).toBe(ROWS[r.request_index]!.input_length);
        expect(r.completion_tokens).toBe(ROWS[r.request_index]!.output_length);
      }
    }
  });

  it('has one schedule_sha256 on 1 and 3 agents, covering the rows, and names the file with its SHA-256', async () => {
    const [three, one] = runs.map((r) => r.run);
    expect(three.schedule_sha256).toBe(one.schedule_sha256);
    expect(three.offered_schedule_matches).toBe(true);
    const local = buildSchedule(await attachWorkloadInputs(plan('http://127.0.0.1:1/v1', traceFile)));
    expect(three.schedule_sha256).toBe(local.sha256);
    const sha = createHash('sha256').update(readFileSync(traceFile)).digest('hex');
    expect(three.workload_files).toEqual([
      { class: 'trace', kind: 'trace', path: traceFile, sha256: sha, rows_in_file: 300, rows_used: 300 },
    ]);
    expect(three.data_quality.checks.find((c: any) => c.name === 'request_shape').status).toBe('pass');
  });

  it('shares prefixes token for token: engine-sim block hashes of the bodies give exactly the implied hits', async () => {
    const p = await attachWorkloadInputs(plan('http://127.0.0.1:1/v1', traceFile));
    const schedule = buildSchedule(p);
    const builder = new WorkloadPromptBuilder('r', p, p.classes[0]!, schedule.classes[0]!, 'chat', 'm');
    const cached = new Set<number>();
    let hits = 0;
    ROWS.forEach((row, i) => {
      const text = JSON.parse(builder.body(i)).messages[0].content as string;
      const hashes = blockHashes(tokenIds(text));
      expect(tokenIds(text)).toHaveLength(row.input_length);
      let h = 0;
      while (h < Math.floor((row.input_length - 1) / 16) && cached.has(hashes[h]!)) h++;
      hits += h * 16;
      for (const x of hashes) cached.add(x);
    });
    expect(hits).toBe(implied.hitTokens);
  });

  // The hash ids imply a row's hits from the rows before it in the file. The server can only see
  // that when those rows reached it first and were prefilled by then: a row is "racing" when a
  // row sharing one of its blocks came earlier in the file but had not streamed its first token
  // when this one was sent, or came later in the file but was sent first (agents on a busy
  // machine send a few ms late). Every non-racing row must match exactly; racing rows may not, but
  // both they and the mismatches among them are bounded, so the exclusion cannot swallow a real
  // cache bug: measured 47–54 racing rows of 300 and 1–2 mismatches among them (2026-12-03, shared
  // 2-core machine); the bounds are 40% and 5% of the rows, over twice what was seen.
  it("engine-sim reports each row's cached prompt tokens exactly as its hash ids imply, except a bounded few rows racing a sharer", () => {
    for (const { rows } of runs) {
      const racing = (r: any): boolean =>
        rows.some((q) => {
          if (q === r || !ROWS[q.request_index]!.hash_ids.some((h) => ROWS[r.request_index]!.hash_ids.includes(h))) return false;
          return q.request_index < r.request_index
            ? BigInt(q.first_content_unix_ns) > BigInt(r.sent_unix_ns)
            : BigInt(q.sent_unix_ns) < BigInt(r.sent_unix_ns);
        });
      const off = rows.filter((r) => r.cached_tokens !== implied.perRow[r.request_index]);
      const offRacing = off.filter(racing);
      console.log(
        `rows whose cached_tokens differ from the implied: ${off.length} of ${rows.length} (${offRacing.length} racing a sharer; racing rows in all: ${rows.filter(racing).length})`,
      );
      expect(off.filter((r) => !racing(r)).map((r) => r.request_index)).toEqual([]);
      expect(rows.filter(racing).length).toBeLessThanOrEqual(0.4 * rows.length);
      expect(offRacing.length).toBeLessThanOrEqual(0.05 * rows.length);
    }
  });

  it("engine-sim's prefix-cache hit ratio is within 3 points of the ratio the hash ids imply, and run.json's gate says so", () => {
    const impliedRatio = implied.hitTokens / implied.queryTokens;
    for (const { counters, run } of runs) {
      const gate = run.data_quality.checks.find((c: any) => c.name === 'cache_evidence_matches_declaration');
      expect([gate.status, gate.evidence.implied_prefix_hit_tokens]).toEqual(['pass', implied.hitTokens]);
      expect(counters.queries).toBe(implied.queryTokens);
      const measured = counters.hits / counters.queries;
      console.log(
        `prefix-cache hit ratio: measured ${measured.toFixed(4)} (${counters.hits}/${counters.queries}), implied ${impliedRatio.toFixed(4)} (${implied.hitTokens}/${implied.queryTokens})`,
      );
      expect(Math.abs(measured - impliedRatio)).toBeLessThan(0.03);
    }
  });
});
