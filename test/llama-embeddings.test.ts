// Embeddings against a real server: test/llama-server.ts's /v1/embeddings, where llama.cpp (through
// node-llama-cpp) embeds each input of the tiny GGUF, with its BPE tokenizer counting the inputs. The
// coordinator sizes the class on the server's /tokenize as plain text (no chat template: an
// embeddings request is not a conversation), each input's head with its batch suffix (which costs two
// tokens here: sized without it, every input was 34 tokens, not 32), and each request's usage is
// held against its batch.
import { describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { runPlanToEnd } from './harness.js';
import { startLlamaServer } from './llama-start.js';
import { nodeLlamaCppMissing } from './node-llama-cpp.js';
import { skipFor } from './require.js';

const BATCH = 4;
const INPUT_TOKENS = 32;

describe.skipIf(skipFor('real llama.cpp embeddings', nodeLlamaCppMissing()))('embeddings on a real llama.cpp server', () => {
  it('embeds every input of every batch, each sized on the server’s tokenizer as plain text', { timeout: 120_000 }, async () => {
    const server = await startLlamaServer();
    try {
      const plan: Plan = {
        schema: 'loadfleet.plan/v1',
        name: 'llama-embeddings',
        seed: 3,
        duration_s: 2.2,
        drain_timeout_s: 20,
        target: { base_url: server.baseUrl, api: 'chat', model: 'tiny-llama-cpp', timeout_s: 20 },
        classes: [
          {
            name: 'emb',
            api: 'embeddings',
            prompt: { input_tokens: INPUT_TOKENS, batch_size: BATCH },
            load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 2, rate_per_s: 4 }] },
          },
        ],
      };
      const { run, rows } = await runPlanToEnd(plan, ['--agents', '2']);
      const cal = run.plan.prompt_calibration.emb;
      expect(cal).toMatchObject({ method: 'server-tokenize', counted_prompt_tokens: INPUT_TOKENS });
      expect(cal.note).toContain('llama.cpp dialect');
      expect(rows).toHaveLength(8);
      for (const r of rows) expect({ status: r.status, inputs: r.inputs }).toEqual({ status: 'ok', inputs: BATCH });
      const tokens = rows.map((r) => r.prompt_tokens);
      const w = run.classes.emb.windows.all;
      console.log(
        `llama.cpp embeddings: prompt_tokens per request ${[...new Set(tokens)].join(', ')} (planned ${BATCH}×${INPUT_TOKENS}); e2e p50 ${w.e2e_p50_ms} ms, ${w.inputs_per_s} inputs/s, ${w.input_tokens_per_s} input tokens/s`,
      );
      expect(tokens.every((t) => t === BATCH * INPUT_TOKENS)).toBe(true);
      expect(w.ttft_p50_ms).toBeUndefined();
      // Before load, the sampled inputs (every suffix of the batch) counted exactly on the server.
      const check = run.classes.emb.prompt_length_check;
      expect(check.exact).toBe(check.sampled);
      const checks = Object.fromEntries(run.data_quality.checks.map((c: { name: string; status: string }) => [c.name, c.status]));
      expect(checks.request_shape).toBe('pass');
    } finally {
      server.stop();
    }
  });
});
