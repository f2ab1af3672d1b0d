import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_TOKEN, REASONING_TOKEN } from './generate.js';
import { type SimServer, startSim } from './server.js';
import { postJson, postStream, wordsPrompt } from './testkit.js';
import { countTokens } from './tokenizer.js';

const TTFT_MS = 40;
const ITL_MS = 8;

describe('streaming responses', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSim({ ttftMs: TTFT_MS, itlMs: ITL_MS, prefillUsPerToken: 0, reasoningTokens: 0 });
  });
  afterAll(() => sim.close());

  it('streams chat tokens one per event, then finish, usage and [DONE]', async () => {
    const prompt = wordsPrompt(12);
    const body = {
      model: 'loadfleet-sim',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: prompt },
      ],
      max_tokens: 20,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
    };
    const r = await postStream(`${sim.url}/v1/chat/completions`, body, { 'x-request-id': 'req-7' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.headers['x-request-id']).toBe('req-7');
    expect(r.error).toBeUndefined();
    expect(r.events.at(-1)).toBe('[DONE]');
    const chunks = r.events.slice(0, -1).map((e) => JSON.parse(e));
    const tokens = chunks.slice(0, 20);
    expect(tokens.every((c) => c.object === 'chat.completion.chunk' && c.choices[0].delta.content === CONTENT_TOKEN)).toBe(true);
    expect(tokens[0].choices[0].delta.role).toBe('assistant');
    expect(tokens.every((c) => c.choices[0].finish_reason === null)).toBe(true);
    expect(chunks[20].choices[0]).toMatchObject({ delta: {}, finish_reason: 'length' });
    expect(chunks[21].choices).toEqual([]);
    expect(chunks[21].usage).toEqual({ prompt_tokens: 2 + 12, completion_tokens: 20, total_tokens: 34 });
    expect(chunks).toHaveLength(22);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('keeps time: TTFT about ttft_ms and gaps about itl_ms', async () => {
    const body = { prompt: wordsPrompt(5), max_tokens: 30, stream: true, ignore_eos: true };
    const r = await postStream(`${sim.url}/v1/completions`, body);
    const tokenTimes = r.atMs.slice(0, 30);
    expect(tokenTimes[0]).toBeGreaterThanOrEqual(TTFT_MS);
    expect(tokenTimes[0]).toBeLessThan(TTFT_MS + 50);
    const meanGapMs = (tokenTimes[29]! - tokenTimes[0]!) / 29;
    expect(meanGapMs).toBeGreaterThan(ITL_MS * 0.8);
    expect(meanGapMs).toBeLessThan(ITL_MS * 1.5);
  });

  it('streams completions chunks and omits usage unless asked', async () => {
    const r = await postStream(`${sim.url}/v1/completions`, { prompt: 'one two three', max_tokens: 4, stream: true, ignore_eos: true });
    const chunks = r.events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.slice(0, 4).map((c) => c.choices[0].text)).toEqual(Array(4).fill(CONTENT_TOKEN));
    expect(chunks.every((c) => c.object === 'text_completion' && c.id.startsWith('cmpl-'))).toBe(true);
    expect(chunks[4].choices[0]).toMatchObject({ text: '', finish_reason: 'length' });
    expect(chunks).toHaveLength(5);
    expect(r.events.at(-1)).toBe('[DONE]');
  });

  it('without ignore_eos stops at a stable length in [1, max_tokens]', async () => {
    const body = { prompt: 'the same prompt every time', max_tokens: 20 };
    const a = await postJson(`${sim.url}/v1/completions`, body);
    const b = await postJson(`${sim.url}/v1/completions`, body);
    const usage = a.json['usage'] as { completion_tokens: number };
    expect(usage.completion_tokens).toBeGreaterThanOrEqual(1);
    expect(usage.completion_tokens).toBeLessThanOrEqual(20);
    expect(b.json['usage']).toEqual(usage);
    const choice = (a.json['choices'] as { text: string; finish_reason: string }[])[0]!;
    expect(countTokens(choice.text)).toBe(usage.completion_tokens);
    expect(choice.finish_reason).toBe(usage.completion_tokens === 20 ? 'length' : 'stop');
  });

  it('answers non-streaming chat with the whole text and usage', async () => {
    const r = await postJson(`${sim.url}/v1/chat/completions`, {
      messages: [{ role: 'user', content: 'a b c d' }],
      max_tokens: 3,
      ignore_eos: true,
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      object: 'chat.completion',
      model: 'loadfleet-sim',
      choices: [{ index: 0, message: { role: 'assistant', content: CONTENT_TOKEN.repeat(3) }, finish_reason: 'length' }],
      usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
    });
  });
});

describe('reasoning tokens', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSim({ ttftMs: 5, itlMs: 2, reasoningTokens: 3 });
  });
  afterAll(() => sim.close());

  it('sends the first reasoning tokens as reasoning_content, then content', async () => {
    const body = { messages: [{ role: 'user', content: 'think first' }], max_tokens: 5, stream: true, ignore_eos: true };
    const r = await postStream(`${sim.url}/v1/chat/completions`, body);
    const deltas = r.events.slice(0, 5).map((e) => JSON.parse(e).choices[0].delta);
    expect(deltas.map((d) => d.reasoning_content ?? null)).toEqual([REASONING_TOKEN, REASONING_TOKEN, REASONING_TOKEN, null, null]);
    expect(deltas.map((d) => d.content ?? null)).toEqual([null, null, null, CONTENT_TOKEN, CONTENT_TOKEN]);
  });

  it('leaves completions untouched', async () => {
    const r = await postJson(`${sim.url}/v1/completions`, { prompt: 'x', max_tokens: 4, ignore_eos: true });
    expect((r.json['choices'] as { text: string }[])[0]!.text).toBe(CONTENT_TOKEN.repeat(4));
  });
});

describe('other routes', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSim({ model: 'm-small', maxModelLen: 1000 });
  });
  afterAll(() => sim.close());

  it('lists the model', async () => {
    const res = await request(`${sim.url}/v1/models`);
    expect(await res.body.json()).toEqual({
      object: 'list',
      data: [{ id: 'm-small', object: 'model', created: 0, owned_by: 'loadfleet', max_model_len: 1000 }],
    });
  });

  it('tokenizes prompts and messages exactly as countTokens counts', async () => {
    const prompt = '  alpha beta\tgamma\n delta  ';
    const a = await postJson(`${sim.url}/tokenize`, { model: 'm-small', prompt });
    expect(a.json).toMatchObject({ count: countTokens(prompt), max_model_len: 1000 });
    expect(a.json['count']).toBe(4);
    expect(a.json['tokens']).toHaveLength(4);
    const b = await postJson(`${sim.url}/tokenize`, {
      messages: [
        { role: 'user', content: prompt },
        { role: 'user', content: 'alpha' },
      ],
    });
    expect(b.json['count']).toBe(5);
    expect((b.json['tokens'] as number[])[4]).toBe((a.json['tokens'] as number[])[0]);
  });

  it('answers /health and 404s unknown routes with an OpenAI-style error', async () => {
    expect((await request(`${sim.url}/health`)).statusCode).toBe(200);
    const res = await request(`${sim.url}/v2/nothing`);
    expect(res.statusCode).toBe(404);
    expect(await res.body.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'not_found', param: null } });
  });
});
