// long_context: what a 32k- and a 128k-token prompt costs to build and to count. The
// vocabulary is found on the test's tiny tokenizer.json (its one-token words, its chat template), a
// per-request class's body is built as an agent builds it — the first one (its class's word stream
// grows) and then the steady cost per request — and counted with the tokenizer file (the slowest
// counter the coordinator uses; a server's /tokenize is the other). Exactness is tested in
// test/long-context.test.ts; these are the times and the heap they take.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findVocabulary } from '../coordinator/calibrate/vocabulary.js';
import type { Plan, TrafficClass } from '../shared/plan.js';
import { RequestText } from '../shared/request-text.js';
import { loadTokenizerFile } from '../shared/tokenizer-file.js';
import { writeTinyTokenizer } from '../test/tiny-tokenizer.js';
import { round3 } from './sampler.js';
import type { BenchContext, Suite, SuiteResult } from './suite.js';
import { fmt } from './suite.js';

const STEADY_REQUESTS = 20;

async function run(ctx: BenchContext): Promise<SuiteResult> {
  const tokenizer = await loadTokenizerFile(writeTinyTokenizer(mkdtempSync(join(tmpdir(), 'lf-bench-long-'))));
  const found = await findVocabulary(async (c) => tokenizer.countRequest(c, 'chat'), 'tokenizer-file', 'bench');
  if (!found.vocabulary) throw new Error(found.note);
  const figures: Record<string, unknown> = {};
  const table: SuiteResult['table'] = [];
  for (const tokens of ctx.quick ? [32 * 1024] : [32 * 1024, 128 * 1024]) {
    const cls: TrafficClass = {
      name: 'long',
      prompt: { input_tokens: { distribution: 'uniform', min: 1, max: 200_000 }, output_tokens: 4 },
      load: { model: 'poisson', phases: [] },
    };
    const plan = { seed: 1, classes: [cls], prompt_vocabulary: found.vocabulary } as unknown as Plan;
    const text = new RequestText(plan, cls, 'bench');
    const heap0 = process.memoryUsage().heapUsed;
    let t0 = performance.now();
    const first = text.build(0, { inputTokens: tokens, outputTokens: 4 });
    const firstMs = performance.now() - t0;
    t0 = performance.now();
    let bytes = 0;
    for (let i = 1; i <= STEADY_REQUESTS; i++)
      bytes = JSON.stringify({ messages: text.build(i, { inputTokens: tokens - i, outputTokens: 4 }).messages }).length;
    const steadyMs = (performance.now() - t0) / STEADY_REQUESTS;
    const heapMb = (process.memoryUsage().heapUsed - heap0) / 1e6;
    t0 = performance.now();
    const counted = tokenizer.countRequest(first.messages, 'chat');
    const countMs = performance.now() - t0;
    const key = `${tokens / 1024}k`;
    figures[key] = {
      planned_tokens: first.planned,
      counted_tokens: counted,
      body_bytes: bytes,
      first_build_ms: round3(firstMs),
      build_and_serialize_ms_per_request: round3(steadyMs),
      heap_growth_mb: round3(heapMb),
      tokenizer_file_count_ms: round3(countMs),
    };
    ctx.log(`long_context ${key}: built in ${fmt(steadyMs, 1)} ms, counted ${counted} in ${fmt(countMs)} ms`);
    table.push(
      { figure: `${key}: build + JSON per request`, value: `${fmt(steadyMs, 1)} ms (first ${fmt(firstMs)} ms), ${fmt(bytes / 1024)} KiB` },
      { figure: `${key}: counted with the tokenizer file`, value: `${counted} tokens (planned ${first.planned}) in ${fmt(countMs)} ms` },
    );
  }
  return { figures, table };
}

export const longContext: Suite = { name: 'long_context', run };
