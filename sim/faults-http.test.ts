import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickFault } from './faults.js';
import { MALFORMED_EVENT } from './generate.js';
import { type SimServer, startSim } from './server.js';
import { postJson, postStream, scrape } from './testkit.js';

const STALL_MS = 150;
const streamBody = {
  messages: [{ role: 'user', content: 'fault me' }],
  max_tokens: 10,
  stream: true,
  stream_options: { include_usage: true },
  ignore_eos: true,
};
const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('faults forced by x-sim-fault', () => {
  let sim: SimServer;
  let chat: string;
  beforeAll(async () => {
    sim = await startSim({ ttftMs: 5, itlMs: 3, allowFaultHeader: true, stallMs: STALL_MS });
    chat = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close()); // also proves close() ends hung responses

  it('429: Retry-After, dropped reason and an OpenAI-style body', async () => {
    const r = await postJson(chat, streamBody, { 'x-sim-fault': '429' });
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('1');
    expect(r.headers['x-llm-d-request-dropped-reason']).toBe('queue-full');
    expect(r.json).toMatchObject({ error: { type: 'rate_limit_error', code: 'queue_full', param: null } });
  });

  it('5xx: a 503 JSON error', async () => {
    const r = await postJson(chat, streamBody, { 'x-sim-fault': '5xx' });
    expect(r.status).toBe(503);
    expect(r.json).toMatchObject({ error: { type: 'server_error', code: 'service_unavailable' } });
  });

  it('reset: a socket error after a couple of tokens', async () => {
    const r = await postStream(chat, streamBody, { 'x-sim-fault': 'reset' });
    expect(r.status).toBe(200);
    expect(r.events).toHaveLength(2);
    expect(r.error).toBeDefined();
    expect(r.events).not.toContain('[DONE]');
    await expect(postJson(chat, { ...streamBody, stream: false }, { 'x-sim-fault': 'reset' })).rejects.toThrow();
  });

  it('malformed: one event that is not JSON, then the stream goes on normally', async () => {
    const r = await postStream(chat, streamBody, { 'x-sim-fault': 'malformed' });
    expect(r.error).toBeUndefined();
    const bad = r.events.filter((e) => e !== '[DONE]' && !isJson(e));
    expect(bad).toEqual([MALFORMED_EVENT.slice('data: '.length, -2)]);
    const contents = r.events.filter(isJson).map((e) => JSON.parse(e).choices[0]?.delta?.content);
    expect(contents.filter((c) => c !== undefined)).toHaveLength(10);
    expect(r.events.at(-1)).toBe('[DONE]');
  });

  it('truncate: ends cleanly after some tokens without usage or [DONE]', async () => {
    const r = await postStream(chat, streamBody, { 'x-sim-fault': 'truncate' });
    expect(r.status).toBe(200);
    expect(r.error).toBeUndefined();
    expect(r.events).toHaveLength(5);
    expect(r.events.every((e) => isJson(e) && JSON.parse(e).usage === undefined)).toBe(true);
  });

  it('no-usage: [DONE] but no usage chunk', async () => {
    const r = await postStream(chat, streamBody, { 'x-sim-fault': 'no-usage' });
    expect(r.events.at(-1)).toBe('[DONE]');
    expect(r.events.slice(0, -1).some((e) => JSON.parse(e).usage !== undefined)).toBe(false);
    expect(r.events).toHaveLength(10 + 1 + 1);
  });

  it('hang: headers, then nothing until the client gives up', async () => {
    const startMs = performance.now();
    const r = await postStream(chat, streamBody, { 'x-sim-fault': 'hang' }, AbortSignal.timeout(300));
    expect(r.status).toBe(200);
    expect(r.events).toEqual([]);
    expect(r.error?.name).toMatch(/Abort|Timeout/);
    expect(performance.now() - startMs).toBeGreaterThanOrEqual(290);
    const hung = postStream(chat, { ...streamBody, stream: false }, { 'x-sim-fault': 'hang' }); // left for close()
    void hung.catch(() => undefined);
  });

  it('stall: one pause of stall-ms mid-stream, then a normal finish', async () => {
    const r = await postStream(chat, streamBody, { 'x-sim-fault': 'stall' });
    const gaps = r.atMs.slice(1, 10).map((t, i) => t - r.atMs[i]!);
    expect(Math.max(...gaps)).toBeGreaterThanOrEqual(STALL_MS - 2);
    expect(gaps.filter((g) => g >= STALL_MS / 2)).toHaveLength(1);
    expect(r.events.at(-1)).toBe('[DONE]');
  });

  it('applies the same faults to non-streamed bodies', async () => {
    const body = { ...streamBody, stream: false };
    const malformed = await postJson(chat, body, { 'x-sim-fault': 'malformed' });
    expect([malformed.status, isJson(malformed.text), Number(malformed.headers['content-length'])]).toEqual([
      200,
      false,
      malformed.text.length,
    ]);
    const truncated = await postJson(chat, body, { 'x-sim-fault': 'truncate' });
    expect([truncated.status, isJson(truncated.text), truncated.headers['content-length']]).toEqual([200, false, undefined]);
    const noUsage = await postJson(chat, body, { 'x-sim-fault': 'no-usage' });
    expect(noUsage.json).toMatchObject({ object: 'chat.completion', choices: [{ finish_reason: 'length' }] });
    expect(noUsage.json['usage']).toBeUndefined();
    const startMs = performance.now();
    const stalled = await postJson(chat, body, { 'x-sim-fault': 'stall' });
    expect(performance.now() - startMs).toBeGreaterThanOrEqual(STALL_MS);
    expect(stalled.json['usage']).toMatchObject({ completion_tokens: 10 });
  });

  it('rejects unknown values and counts injected faults in /metrics', async () => {
    const r = await postJson(chat, streamBody, { 'x-sim-fault': 'slow' });
    expect(r.status).toBe(400);
    const m = await scrape(sim.url);
    expect(m.get('loadfleet_sim_faults_injected_total{model_name="loadfleet-sim",fault="429"}')).toBe(1);
    expect(m.get('loadfleet_sim_faults_injected_total{model_name="loadfleet-sim",fault="reset"}')).toBe(2);
    expect(m.get('loadfleet_sim_faults_injected_total{model_name="loadfleet-sim",fault="stall"}')).toBe(2);
  });
});

describe('seeded fault rates', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSim({ ttftMs: 0, itlMs: 1, faults: { '5xx': 0.3, '429': 0.2 }, faultSeed: 42, allowFaultHeader: true });
  });
  afterAll(() => sim.close());

  it('fail exactly the arrivals the PRNG picks; the header "none" opts out', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await postJson(`${sim.url}/v1/completions`, { prompt: 'x', max_tokens: 1 })).status);
    const statusOf: Record<string, number> = { '5xx': 503, '429': 429 };
    const expected = Array.from({ length: 30 }, (_, i) => statusOf[pickFault({ '5xx': 0.3, '429': 0.2 }, 42, i) ?? ''] ?? 200);
    expect(statuses).toEqual(expected);
    expect(new Set(statuses)).toEqual(new Set([200, 429, 503]));
    for (let i = 0; i < 10; i++) {
      expect((await postJson(`${sim.url}/v1/completions`, { prompt: 'x', max_tokens: 1 }, { 'x-sim-fault': 'none' })).status).toBe(200);
    }
  });
});
