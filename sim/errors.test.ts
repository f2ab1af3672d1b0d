import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimServer, startSim } from './server.js';
import { postJson, wordsPrompt } from './testkit.js';

describe('request validation', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSim({ ttftMs: 1, itlMs: 1, maxModelLen: 100 });
  });
  afterAll(() => sim.close());

  const expectError = (r: Awaited<ReturnType<typeof postJson>>, status: number, code: string, param: string | null) => {
    expect(r.status).toBe(status);
    expect(r.headers['content-type']).toBe('application/json');
    const error = r.json['error'] as Record<string, unknown>;
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(error).toMatchObject({ type: 'invalid_request_error', code, param });
    expect(typeof error['message']).toBe('string');
    return error;
  };

  it('400s malformed JSON', async () => {
    expectError(await postJson(`${sim.url}/v1/chat/completions`, '{"messages": ['), 400, 'invalid_json', null);
    expectError(await postJson(`${sim.url}/v1/completions`, '[1, 2]'), 400, 'invalid_json', null);
  });

  it('404s another model name', async () => {
    const error = expectError(
      await postJson(`${sim.url}/v1/completions`, { model: 'gpt-9', prompt: 'hi' }),
      404,
      'model_not_found',
      'model',
    );
    expect(error['message']).toContain('gpt-9');
  });

  it('400s max_tokens that is not a positive integer', async () => {
    for (const max_tokens of [0, -3, 2.5, '8']) {
      expectError(await postJson(`${sim.url}/v1/completions`, { prompt: 'hi', max_tokens }), 400, 'invalid_value', 'max_tokens');
    }
  });

  it('400s a prompt longer than max_model_len, with a vLLM-like message', async () => {
    const chat = {
      messages: [
        { role: 'user', content: wordsPrompt(60) },
        { role: 'user', content: wordsPrompt(41) },
      ],
    };
    const error = expectError(await postJson(`${sim.url}/v1/chat/completions`, chat), 400, 'context_length_exceeded', 'messages');
    expect(error['message']).toBe(
      "This model's maximum context length is 100 tokens. However, your request has 101 input tokens. Please reduce the length of the input messages.",
    );
    // As in vLLM, prompt + max_tokens must fit too; without max_tokens the default shrinks to fit.
    const over = expectError(
      await postJson(`${sim.url}/v1/completions`, { prompt: wordsPrompt(100), max_tokens: 1 }),
      400,
      'context_length_exceeded',
      'max_tokens',
    );
    expect(over['message']).toBe(
      "This model's maximum context length is 100 tokens. However, you requested 101 tokens (100 in the prompt, 1 in the completion). Please reduce the length of the prompt or completion.",
    );
    expect((await postJson(`${sim.url}/v1/completions`, { prompt: wordsPrompt(99), max_tokens: 1 })).status).toBe(200);
    const fitted = await postJson(`${sim.url}/v1/completions`, { prompt: wordsPrompt(90), ignore_eos: true });
    expect(fitted.json['usage']).toMatchObject({ prompt_tokens: 90, completion_tokens: 10 });
  });

  it('400s wrongly typed fields', async () => {
    expectError(await postJson(`${sim.url}/v1/chat/completions`, { messages: [] }), 400, 'invalid_value', 'messages');
    expectError(
      await postJson(`${sim.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 5 }] }),
      400,
      'invalid_value',
      'messages[0].content',
    );
    expectError(await postJson(`${sim.url}/v1/completions`, { prompt: ['a'] }), 400, 'invalid_value', 'prompt');
    expectError(await postJson(`${sim.url}/v1/completions`, { prompt: 'a', stream: 'yes' }), 400, 'invalid_value', 'stream');
  });

  it('ignores x-sim-fault unless --allow-fault-header is set', async () => {
    const r = await postJson(`${sim.url}/v1/completions`, { prompt: 'a', max_tokens: 2 }, { 'x-sim-fault': '5xx' });
    expect(r.status).toBe(200);
  });
});
