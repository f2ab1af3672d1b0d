// Long contexts end to end: Mooncake rows of 32k and 128k tokens (the second 128k row continuing
// the first's blocks) from 2 agents against engine-sim with a 200k context, and against a server
// counting with a tokenizer.json (the plan's tokenizer file, the slower counter: ~2 s per 128k
// body). Each row is built, counted before load (within prompt_length_check's token budget) and
// sent, and the server counts exactly its input_length. Timings are in bench/, not asserted here.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mooncakeJsonl } from '../scripts/trace-synth.js';
import type { Plan } from '../shared/plan.js';
import { loadTokenizerFile } from '../shared/tokenizer-file.js';
import { onlyRunDir, readRequests, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';
import { writeTinyTokenizer } from './tiny-tokenizer.js';
import { startTokenizerServer } from './tokenizer-server.js';

const K = 1024;
const ids = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);
const ROWS = [
  { timestamp: 0, input_length: 32 * K, output_length: 4, hash_ids: ids(0, 64) },
  { timestamp: 200, input_length: 128 * K, output_length: 4, hash_ids: ids(1000, 256) },
  { timestamp: 400, input_length: 128 * K - 100, output_length: 4, hash_ids: [...ids(1000, 200), ...ids(5000, 56)] },
];

function plan(traceFile: string, target?: Plan['target']): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: 'long-context',
    seed: 2,
    duration_s: 1,
    drain_timeout_s: 60,
    ...(target && { target }),
    classes: [{ name: 'long', prompt: {}, load: { model: 'trace', phases: [], trace: { file: traceFile, format: 'mooncake' } } }],
  };
}

async function runAndCheck(work: string, p: Plan, simArgs: string[]): Promise<any> {
  const res = await runCoordinator(['--agents', '2', '--plan', writePlan(work, p), '--out', join(work, 'out'), '--quiet', ...simArgs]);
  expect(res.code, res.stderr).toBe(0);
  const dir = onlyRunDir(join(work, 'out'));
  const run = readRunJson(dir);
  const rows = readRequests(dir);
  expect(rows).toHaveLength(ROWS.length);
  for (const r of rows) {
    expect(r.status, r.error).toBe('ok');
    expect(r.prompt_tokens).toBe(ROWS[r.request_index]!.input_length);
    expect(r.planned_prompt_tokens).toBe(r.prompt_tokens);
    expect(r.completion_tokens).toBe(4);
  }
  // Every row counted before load (294,812 planned tokens, inside the 524,288-token budget), all exact.
  expect(run.classes.long.prompt_length_check).toMatchObject({ sampled: 3, exact: 3, max_abs_difference: 0 });
  return run;
}

describe('long contexts: 32k and 128k tokens', () => {
  it('engine-sim (200k context): built, counted and sent exactly', async () => {
    const work = tempDir();
    const traceFile = join(work, 'long.jsonl');
    writeFileSync(traceFile, mooncakeJsonl(ROWS));
    await runAndCheck(work, plan(traceFile), ['--sim-arg=--max-model-len=200000', '--sim-arg=--kv-cache-tokens=600000']);
  }, 120_000);

  it('a server counting with a tokenizer.json, through the plan’s tokenizer file', async () => {
    const work = tempDir();
    const traceFile = join(work, 'long.jsonl');
    writeFileSync(traceFile, mooncakeJsonl(ROWS));
    const file = writeTinyTokenizer(mkdtempSync(join(tmpdir(), 'lf-long-')));
    const s = await startTokenizerServer(await loadTokenizerFile(file), { tokenize: false });
    try {
      const run = await runAndCheck(
        work,
        plan(traceFile, { base_url: s.baseUrl, api: 'chat', model: 'tok', timeout_s: 60, tokenizer: file }),
        [],
      );
      expect(run.classes.long.prompt_length_method).toBe('tokenizer-file');
    } finally {
      await s.close();
    }
  }, 180_000);
});
