// The fleet against an OpenAI-compatible server doing real llama.cpp inference (node-llama-cpp,
// which ships llama.cpp) on a tiny GGUF the test writes: prompt lengths are calibrated through the
// server's tokenize endpoint (llama.cpp's dialect: /apply-template, then /tokenize with content),
// so request_shape passes on a tokenizer that is nothing like engine-sim's one word per token.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKind, Plan } from '../shared/plan.js';
import { promptFill, promptHead, promptText, uncalibratedWords } from '../shared/prompt-text.js';
import { onlyRunDir, readRequests, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';
import { type LlamaServer, startLlamaServer } from './llama-start.js';
import { nodeLlamaCppMissing } from './node-llama-cpp.js';
import { skipFor } from './require.js';

const INPUT_TOKENS = 64;
const OUTPUT_TOKENS = 8;

function plan(baseUrl: string, api: ApiKind): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: `llama-${api}`,
    seed: 21,
    duration_s: 3,
    drain_timeout_s: 10,
    target: { base_url: baseUrl, api, model: 'tiny-llama-cpp', timeout_s: 20 },
    classes: [
      {
        name: 'rt',
        prompt: { input_tokens: INPUT_TOKENS, output_tokens: OUTPUT_TOKENS },
        load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 3, rate_per_s: 4 }] },
      },
    ],
  };
}

async function post(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return res.json();
}

describe.skipIf(skipFor('real llama.cpp inference', nodeLlamaCppMissing()))('a real llama.cpp server', () => {
  let server: LlamaServer;
  let baseUrl: string;

  beforeAll(async () => {
    server = await startLlamaServer();
    baseUrl = server.baseUrl;
  });
  afterAll(() => server?.stop());

  it.each(['chat', 'completions'] as const)(
    '%s: prompts calibrated on its tokenizer, request_shape passes, usage from the server',
    async (api) => {
      const work = tempDir();
      const res = await runCoordinator([
        '--agents',
        '2',
        '--plan',
        writePlan(work, plan(baseUrl, api)),
        '--out',
        join(work, 'out'),
        '--quiet',
      ]);
      expect(res.code, res.stderr).toBe(0);
      const dir = onlyRunDir(join(work, 'out'));
      const run = readRunJson(dir);
      const rows = readRequests(dir);
      expect(rows).toHaveLength(12);
      const cal = run.plan.prompt_calibration.rt;
      expect(cal).toMatchObject({ method: 'server-tokenize' });
      expect(cal.note).toContain('llama.cpp dialect');
      // Exact: filler words up to just below the target, then one-token pad words.
      expect(cal.counted_prompt_tokens).toBe(INPUT_TOKENS);
      for (const r of rows) {
        expect(r.status, r.error).toBe('ok');
        // The server's own count of what was sent: the calibrated length (heads are all one width).
        expect(r.prompt_tokens).toBe(cal.counted_prompt_tokens);
        expect(r).toMatchObject({ completion_tokens: OUTPUT_TOKENS, output_token_source: 'usage' });
      }
      const checks = Object.fromEntries(run.data_quality.checks.map((c: any) => [c.name, c.status]));
      expect(checks).toMatchObject({ request_shape: 'pass', stream_integrity: 'pass', output_token_counts: 'pass', schedule_kept: 'pass' });
      expect(run.classes.rt.prompt_length_method).toBe('server-tokenize');
      expect(run.classes.rt.windows.all.ttft_samples).toBe(12);
      expect(run.classes.rt.windows.all.tpot_samples).toBe(12);

      // Without calibration (one filler word per intended token) the same server counts far more.
      const words = uncalibratedWords(INPUT_TOKENS, 0);
      const text = promptText(promptFill(21, 'rt', words.prefixWords, words.words), promptHead(run.run_id, 'rt', 0));
      const root = baseUrl.replace(/\/v1$/, '');
      const prompt = api === 'chat' ? (await post(`${root}/apply-template`, { messages: [{ role: 'user', content: text }] })).prompt : text;
      const uncalibrated = (await post(`${root}/tokenize`, { content: prompt, add_special: true })).tokens.length;
      expect(uncalibrated).toBeGreaterThan(INPUT_TOKENS * 1.1);
      console.log(
        `llama.cpp ${api}: ${INPUT_TOKENS} tokens asked; calibrated ${cal.prefix_words + cal.words} filler + ${cal.pad_words} pad words → ${cal.counted_prompt_tokens} tokens in ${cal.attempts} calls; uncalibrated ${words.words} words → ${uncalibrated} tokens`,
      );
    },
  );
});
