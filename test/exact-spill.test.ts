// The exact figures of run.json do not depend on whether the coordinator held the raw values in
// memory or spilled them to a file and selected from it (coordinator/exact-store.ts): the same records give
// the same bytes, and a real run's spilled figures are those a sort of requests.ndjson gives.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type * as MemoryBench from '../bench/coordinator-memory.js';
import { MAX_IN_MEMORY_ENV } from '../coordinator/exact-store.js';
import { nearestRank } from '../shared/histogram.js';
import type { LatencyMetric, RequestRecord } from '../shared/metrics.js';
import { metricNs, windowsAt, windowTimeNs } from '../shared/metrics.js';
import type { Plan } from '../shared/plan.js';
import { distPath, onlyRunDir, readRequests, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';

const SPILL_ALL = { [MAX_IN_MEMORY_ENV]: '0' };
// The built bench: it starts the built coordinator and synthetic fleet beside it.
const { exactFigures, measure }: typeof MemoryBench = await import(pathToFileURL(distPath('bench/coordinator-memory.js')).href);

describe('exact figures through a spill file', () => {
  it('are byte-identical to the in-memory ones for the same records (real coordinator, synthetic agents)', async () => {
    const size = { requests: 20_000, ratePerS: 2000, agents: 3 };
    const inMemory = await measure(size);
    const spilled = await measure(size, SPILL_ALL);
    expect(inMemory.run_status).toBe('completed');
    expect(inMemory.records_in_run_json).toBe(20_000);
    expect([inMemory.exact_method, spilled.exact_method]).toEqual(['in-memory sort', 'streamed selection']);
    expect(spilled.exact_passes).toBeGreaterThan(0);
    expect(JSON.stringify(spilled.exact_figures)).toBe(JSON.stringify(inMemory.exact_figures));
    expect(exactFigures(null)).toMatchObject({ max_relative_error_vs_exact: null });
  });

  it('are those a sort of requests.ndjson gives (real run, embedded engine-sim)', async () => {
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'exact-spill',
      seed: 3,
      duration_s: 3,
      drain_timeout_s: 5,
      classes: [
        {
          name: 'rt',
          prompt: { input_tokens: 16, output_tokens: 8 },
          load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 3, rate_per_s: 60 }] },
          slo: { ttft_p95_ms: 500, tpot_p95_ms: 100, e2e_p95_ms: 2000, basis: 'intended' },
        },
      ],
      windows: [{ name: 'mid', start_s: 1, end_s: 2 }],
    };
    const work = tempDir();
    const res = await runCoordinator(['--agents', '2', '--plan', writePlan(work, plan), '--out', join(work, 'out'), '--quiet'], SPILL_ALL);
    expect(res.code, res.stderr).toBe(0);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    expect(run.histograms.exact_method).toBe('streamed selection');
    expect(run.histograms.exact_passes).toBeGreaterThan(0);

    // Every record back from its row, times as ns from the run start (differences are exact integers).
    const start = BigInt(run.started_at_unix_ns);
    const at = (ns: bigint | null): number | null => (ns === null ? null : Number(ns - start));
    const records = readRequests(dir).map(
      (row): RequestRecord => ({
        class: row.class,
        request_index: row.request_index,
        status: row.status,
        http_status: row.http_status,
        intended_ns: at(row.intended_unix_ns),
        sent_ns: at(row.sent_unix_ns)!,
        headers_ns: at(row.headers_unix_ns),
        first_output_ns: at(row.first_output_unix_ns),
        first_content_ns: at(row.first_content_unix_ns),
        last_token_ns: at(row.last_token_unix_ns),
        done_ns: at(row.done_unix_ns),
        prompt_tokens: row.prompt_tokens,
        completion_tokens: row.completion_tokens,
        output_token_source: row.output_token_source,
        cached_tokens: row.cached_tokens,
        reasoning_chunks: row.reasoning_chunks,
        content_chunks: row.content_chunks,
        canary: null,
        retry_after_s: null,
        dropped_reason: null,
        error: row.error,
      }),
    );
    const sorted = (window: string, metric: Exclude<LatencyMetric, 'itl'>): Float64Array =>
      Float64Array.from(
        records
          .filter((r) => windowsAt(plan.windows!, windowTimeNs(r)).includes(window))
          .map((r) => metricNs(r, metric))
          .filter((v): v is number => v !== null),
      ).sort();
    for (const w of ['all', 'mid']) {
      const figures = Object.fromEntries(run.classes.rt.slo_verdict.windows[w].criteria.map((c: any) => [c.criterion, c.figure]));
      expect(figures).toEqual({
        ttft_p95_ms: nearestRank(sorted(w, 'ttft_from_intended'), 0.95) / 1e6,
        tpot_p95_ms: nearestRank(sorted(w, 'tpot'), 0.95) / 1e6,
        e2e_p95_ms: nearestRank(sorted(w, 'e2e'), 0.95) / 1e6,
      });
    }
    const lags = sorted('all', 'schedule_lag');
    const kept = run.data_quality.checks.find((c: any) => c.name === 'schedule_kept').evidence.classes.rt;
    expect(kept.schedule_lag_p99_ms).toBe(Math.round((nearestRank(lags, 0.99) / 1e6) * 1000) / 1000);
    expect(kept.schedule_lag_max_ms).toBe(Math.round((lags[lags.length - 1]! / 1e6) * 1000) / 1000);
  });
});
