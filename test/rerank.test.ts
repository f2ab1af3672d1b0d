// suite: timing
// Rerank (api "rerank", POST /v1/rerank) against the embedded engine-sim: a fixed query and a
// batch of documents per request, latency without a first token (the metric population says so),
// documents and scored tokens per second; each (query, document) pair is charged and counted.
import { describe, expect, it } from 'vitest';
import { RERANK_QUERY } from '../shared/api-kinds.js';
import type { Plan, TrafficClass } from '../shared/plan.js';
import { runPlanToEnd } from './harness.js';

const load = (start: number) => ({ model: 'constant-rate' as const, phases: [{ start_s: start, duration_s: 2, rate_per_s: 5 }] });
const R1: TrafficClass = { name: 'r1', api: 'rerank', prompt: { input_tokens: 128 }, load: load(0) };
const R16: TrafficClass = { name: 'r16', api: 'rerank', prompt: { input_tokens: 128, batch_size: 16 }, load: load(0.1) };
// engine-sim counts words: each pair is the query's words plus the document's.
const PAIR = 128 + RERANK_QUERY.split(' ').length;

describe('rerank', () => {
  it('scores a batch of documents per request, timed end to end, every pair counted', async () => {
    const plan: Plan = { schema: 'loadfleet.plan/v1', name: 'rerank', seed: 5, duration_s: 2.1, drain_timeout_s: 10, classes: [R1, R16] };
    const { run, rows } = await runPlanToEnd(plan, ['--agents', '2']);
    for (const [name, batch] of [
      ['r1', 1],
      ['r16', 16],
    ] as const) {
      const own = rows.filter((r) => r.class === name);
      expect(own).toHaveLength(10);
      expect(own.every((r) => r.status === 'ok' && r.inputs === batch && r.prompt_tokens === PAIR * batch)).toBe(true);
      expect(own.every((r) => r.first_content_unix_ns === null && r.completion_tokens === null)).toBe(true);
      const w = run.classes[name].windows.all;
      expect(w).toMatchObject({ inputs: 10 * batch, input_tokens: 10 * PAIR * batch, mean_batch_size: batch });
      expect(w.ttft_p50_ms).toBeUndefined();
      expect(w.e2e_p50_ms).toBeGreaterThan(0);
      expect(run.metric_population.not_applicable[name].metrics).toEqual(expect.arrayContaining(['ttft', 'tpot', 'itl']));
      expect(run.metric_population.not_applicable[name].note ?? JSON.stringify(run.metric_population.not_applicable[name])).toMatch(
        /rerank/,
      );
    }
    const w1 = run.classes.r1.windows.all;
    const w16 = run.classes.r16.windows.all;
    // 16 pairs prefill 16× the tokens of one: the batch takes engine steps longer.
    expect(w16.e2e_p50_ms).toBeGreaterThan(w1.e2e_p50_ms);
    const checks = Object.fromEntries(run.data_quality.checks.map((c: { name: string; status: string }) => [c.name, c.status]));
    expect(checks).toMatchObject({ request_shape: 'pass', stream_integrity: 'pass' });
    console.log(
      `rerank: e2e p50 ${w1.e2e_p50_ms} ms (1 document), ${w16.e2e_p50_ms} ms (16 documents, ${w16.inputs_per_s} documents/s, ${w16.input_tokens_per_s} tok/s)`,
    );
  });
});
