// suite: timing
// Embeddings against the embedded engine-sim: per-request batch size and input tokens, latency
// without a first token (the metric population says so), inputs and tokens per second, and their
// prefill sharing the engine with chat so realtime TTFT rises beside a batch of embeddings.
import { describe, expect, it } from 'vitest';
import type { Plan, TrafficClass } from '../shared/plan.js';
import { runPlanToEnd } from './harness.js';

const load = { model: 'constant-rate' as const, phases: [{ start_s: 0, duration_s: 3, rate_per_s: 4 }] };
// Each chat request comes 20 ms after a batch, while the batch (~135 ms) is being prefilled: sent at
// the same instant, which of the two the engine took first was a tie of sub-millisecond send order.
const RT: TrafficClass = {
  name: 'rt',
  prompt: { input_tokens: 64, output_tokens: 16 },
  load: { model: 'constant-rate', phases: [{ start_s: 0.02, duration_s: 2.98, rate_per_s: 4 }] },
};
// Single inputs arrive between the batches (0.2 s later, a batch takes ~150 ms), so each is measured on its own.
const EMB1: TrafficClass = {
  name: 'emb1',
  api: 'embeddings',
  prompt: { input_tokens: 256 },
  load: { model: 'constant-rate', phases: [{ start_s: 0.2, duration_s: 2.8, rate_per_s: 4 }] },
};
const EMB32: TrafficClass = { name: 'emb32', api: 'embeddings', prompt: { input_tokens: 256, batch_size: 32 }, load };

const plan = (name: string, classes: TrafficClass[]): Plan => ({
  schema: 'loadfleet.plan/v1',
  name,
  seed: 3,
  duration_s: 3,
  drain_timeout_s: 10,
  classes,
});

describe('embeddings', () => {
  it('measures batches by latency, inputs/s and tokens/s, and slows chat sharing the engine', { timeout: 120_000 }, async () => {
    const alone = await runPlanToEnd(plan('emb-alone', [RT]), ['--agents', '2']);
    const { run, rows } = await runPlanToEnd(plan('emb-mix', [RT, EMB1, EMB32]), ['--agents', '2']);
    for (const [name, batch] of [
      ['emb1', 1],
      ['emb32', 32],
    ] as const) {
      const own = rows.filter((r) => r.class === name);
      const n = own.length;
      expect(n).toBeGreaterThanOrEqual(11);
      // Every input is 256 tokens on engine-sim (its head's suffix keeps it one word), counted by the server's usage.
      expect(own.every((r) => r.status === 'ok' && r.inputs === batch && r.prompt_tokens === 256 * batch)).toBe(true);
      expect(own.every((r) => r.first_content_unix_ns === null && r.completion_tokens === null)).toBe(true);
      const w = run.classes[name].windows.all;
      expect(w).toMatchObject({ inputs: n * batch, input_tokens: n * 256 * batch, mean_batch_size: batch });
      // No first token: TTFT and its kin are absent (not zero), and the population says why.
      expect(w.ttft_p50_ms).toBeUndefined();
      expect(w.tpot_p50_ms).toBeUndefined();
      expect(w.e2e_p50_ms).toBeGreaterThan(0);
      expect(run.metric_population.not_applicable[name].metrics).toEqual(expect.arrayContaining(['ttft', 'tpot', 'itl']));
    }
    const e1 = run.classes.emb1.windows.all;
    const e32 = run.classes.emb32.windows.all;
    expect(e32.inputs_per_s / e1.inputs_per_s).toBeCloseTo(e32.inputs / e1.inputs, 1);
    expect(e32.input_tokens_per_s).toBeCloseTo(e32.inputs_per_s * 256, -1);
    // 32 inputs prefill 32× the tokens of one: the batch takes several engine steps longer.
    expect(e32.e2e_p50_ms).toBeGreaterThan(2 * e1.e2e_p50_ms);
    expect(run.metric_population.not_applicable.rt).toBeUndefined();
    const checks = Object.fromEntries(run.data_quality.checks.map((c: { name: string; status: string }) => [c.name, c.status]));
    expect(checks).toMatchObject({ request_shape: 'pass', output_token_counts: 'pass', stream_integrity: 'pass' });
    // Interference: a batch already prefilling holds up the chat request that arrives behind it.
    const before = alone.run.classes.rt.windows.all.ttft_p50_ms;
    const after = run.classes.rt.windows.all.ttft_p50_ms;
    console.log(
      `embeddings: e2e p50 ${e1.e2e_p50_ms} ms (batch 1), ${e32.e2e_p50_ms} ms (batch 32, ${e32.inputs_per_s} inputs/s, ${e32.input_tokens_per_s} tok/s); chat TTFT p50 ${before} ms alone, ${after} ms beside them`,
    );
    expect(after).toBeGreaterThan(3 * before);
  });
});
