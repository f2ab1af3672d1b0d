// `loadfleet doctor` against the real llama.cpp inference server of test/llama.test.ts
// (node-llama-cpp on a tiny GGUF the test writes): the llama.cpp tokenize dialect is found
// (/apply-template, then /tokenize with content) and counted on the model's own tokenizer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadfleet } from './harness.js';
import { type LlamaServer, startLlamaServer } from './llama-start.js';
import { nodeLlamaCppMissing } from './node-llama-cpp.js';
import { skipFor } from './require.js';

describe.skipIf(skipFor('real llama.cpp inference', nodeLlamaCppMissing()))('loadfleet doctor against a real llama.cpp server', () => {
  let server: LlamaServer;
  let baseUrl: string;

  beforeAll(async () => {
    server = await startLlamaServer();
    baseUrl = server.baseUrl;
  });
  afterAll(() => server?.stop());

  it('finds the llama.cpp tokenize dialect, streaming and usage on both APIs; no metrics endpoint, said', async () => {
    const res = await loadfleet(['doctor', baseUrl, '--json', '--timeout-s', '30']);
    expect(res.code, res.stderr).toBe(0);
    const report = JSON.parse(res.stdout);
    expect(report).toMatchObject({ loadable: true, model: 'tiny-llama-cpp', preferred_api: 'chat' });
    for (const api of ['chat', 'completions'])
      expect(report.apis[api]).toMatchObject({ streams: true, usage: 'streamed', ignore_eos: 'accepted' });
    expect(report.tokenize).toMatchObject({ dialect: 'llama.cpp', prompt_length_method: 'server-tokenize' });
    // The chat template and BOS around the 8-word prompt on a 330-token byte-level vocabulary: far more than 8.
    expect(report.tokenize.probe_tokens).toBeGreaterThan(8);
    expect(report.metrics[0]).toMatchObject({ ok: false });
    expect(report.notes.join('\n')).toContain('no serving metrics found');
    console.log(
      `doctor on llama.cpp: ${report.requests_made} requests; ${report.tokenize.detail}; probe prompt ${report.tokenize.probe_tokens} tokens; messages: ${report.apis.anthropic?.detail}`,
    );
  });
});
