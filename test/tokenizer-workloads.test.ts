// Every load model exact on a server counting with a Hugging Face tokenizer.json (the test's tiny
// BPE, its chat template applied as vLLM applies it): through the server's vLLM-dialect /tokenize,
// and, on a server without one, through the plan's tokenizer file. A Mooncake trace, a lognormal
// distribution and 3-turn sessions from 2 agents: every request's usage.prompt_tokens equals its
// plan (the replies are " the" × n, which the server re-counts as n tokens, so later turns too).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mooncakeJsonl, synthMooncake } from '../scripts/trace-synth.js';
import type { ApiKind, Plan } from '../shared/plan.js';
import { loadTokenizerFile } from '../shared/tokenizer-file.js';
import { onlyRunDir, readRequests, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';
import { writeTinyTokenizer } from './tiny-tokenizer.js';
import { startTokenizerServer } from './tokenizer-server.js';

const ROWS = synthMooncake({ rows: 60, seed: 7, ratePerS: 30, blockTokens: 32, outputTokens: [2, 6] });

// Records of 6·i words, 18·i tokens on the tiny tokenizer (" alpha" costs five): filtered on words
// and on tokens, different records pass.
const RECORDS = Array.from({ length: 15 }, (_, i) => ({ prompt: 'the alpha '.repeat((i + 1) * 3).trim(), output_tokens: 2 }));

function plan(baseUrl: string, api: ApiKind, traceFile: string, tokenizer?: string): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: 'tokenizer-workloads',
    seed: 3,
    duration_s: 3,
    drain_timeout_s: 10,
    target: { base_url: baseUrl, api, model: 'tok', timeout_s: 10, ...(tokenizer && { tokenizer }) },
    classes: [
      { name: 'trace', prompt: {}, load: { model: 'trace', phases: [], trace: { file: traceFile, format: 'mooncake', block_tokens: 32 } } },
      {
        name: 'dist',
        prompt: { input_tokens: { distribution: 'lognormal', mu: 5, sigma: 0.8, min: 30, max: 2000 }, output_tokens: 3 },
        load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 2.5, rate_per_s: 12 }] },
      },
      {
        name: 'data',
        prompt: {
          dataset: { file: traceFile.replace('trace.jsonl', 'data.jsonl'), format: 'jsonl', min_input_tokens: 60, max_input_tokens: 200 },
          output_tokens: 2,
        },
        load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 2.5, rate_per_s: 6 }] },
      },
      {
        name: 'chat',
        prompt: { output_tokens: { distribution: 'uniform', min: 2, max: 9 } },
        load: {
          model: 'sessions',
          phases: [{ start_s: 0, duration_s: 2, rate_per_s: 4 }],
          session: { turns: 3, user_tokens: { distribution: 'uniform', min: 20, max: 120 }, think_time_s: 0 },
        },
      },
    ],
  };
}

describe('every load model exact on a server counting with a tokenizer.json', () => {
  it.each([
    ['server-tokenize', 'chat'],
    ['tokenizer-file', 'completions'],
  ] as const)('%s (%s): every request counts its plan; request_shape passes', async (method, api) => {
    const work = tempDir();
    const file = writeTinyTokenizer(mkdtempSync(join(tmpdir(), 'lf-tokw-')));
    const s = await startTokenizerServer(await loadTokenizerFile(file), { tokenize: method === 'server-tokenize' });
    try {
      const traceFile = join(work, 'trace.jsonl');
      writeFileSync(traceFile, mooncakeJsonl(ROWS));
      writeFileSync(join(work, 'data.jsonl'), RECORDS.map((r) => JSON.stringify(r)).join('\n'));
      const p = plan(s.baseUrl, api, traceFile, method === 'tokenizer-file' ? file : undefined);
      const res = await runCoordinator(['--agents', '2', '--plan', writePlan(work, p), '--out', join(work, 'out'), '--quiet']);
      expect(res.code, res.stderr).toBe(0);
      const dir = onlyRunDir(join(work, 'out'));
      const run = readRunJson(dir);
      const rows = readRequests(dir);
      expect(run.plan.prompt_vocabulary.method).toBe(method);
      // Datasets: every record counted on the target as sent (head, template) and filtered on those counts.
      const data = run.plan.prompt_calibration.data;
      const head = 1 + run.plan.prompt_vocabulary.head_words;
      const special = api === 'chat' ? 7 : 1;
      const expected = RECORDS.map((_, i) => 18 * (i + 1) + head + special).filter((t) => t >= 60 && t <= 200);
      expect(data.record_tokens).toEqual(expected);
      expect(run.workload_files.find((f: any) => f.kind === 'dataset')).toMatchObject({ rows_in_file: 15, rows_used: expected.length });
      for (const name of ['trace', 'dist', 'chat', 'data']) {
        expect(run.classes[name].prompt_length_method).toBe(method);
        const check = run.classes[name].prompt_length_check;
        expect(check).toMatchObject({ exact: check.sampled, max_abs_difference: 0 });
      }
      for (const r of rows) {
        expect(r.status, r.error).toBe('ok');
        expect(r.prompt_tokens, `${r.class} ${r.request_index}`).toBe(r.planned_prompt_tokens);
        if (r.class === 'trace') expect(r.prompt_tokens).toBe(ROWS[r.request_index]!.input_length);
      }
      expect(rows.filter((r) => r.class === 'chat' && r.turn === 3).length).toBeGreaterThan(2);
      const shape = run.data_quality.checks.find((c: any) => c.name === 'request_shape');
      expect(shape.status, shape.reason).toBe('pass');
      console.log(`${method} ${api}: ${rows.length} requests, all exact; ${run.plan.prompt_vocabulary.note}`);
    } finally {
      await s.close();
    }
  });
});
