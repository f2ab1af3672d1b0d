import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otherMarker } from './generate.js';
import { canaryMarkerIn } from './openai.js';
import { type SimServer, startSim } from './server.js';
import { postJson, postStream } from './testkit.js';

const MARKER = 'KQZV_REQ_7_00041';
const body = (stream: boolean) => ({
  messages: [{ role: 'user', content: `${MARKER} the of and\n\nBegin your answer with ${MARKER} and nothing before it.` }],
  max_tokens: 6,
  stream,
  stream_options: { include_usage: true },
  ignore_eos: true,
});
const contentOf = (events: string[]) =>
  events
    .filter((e) => e !== '[DONE]')
    .map((e) => (JSON.parse(e).choices[0]?.delta?.content as string | undefined) ?? '')
    .join('');

describe('canary instructions', () => {
  let sim: SimServer;
  let chat: string;
  beforeAll(async () => {
    sim = await startSim({ ttftMs: 2, itlMs: 1, allowFaultHeader: true, reasoningTokens: 2 });
    chat = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  it('finds the marker a prompt asks for', () => {
    expect(canaryMarkerIn(`x\n\nBegin your answer with ${MARKER} and nothing before it.`)).toBe(MARKER);
    expect(canaryMarkerIn('Begin your answer with ABCD_REQ_1_00001.')).toBe('ABCD_REQ_1_00001');
    expect(canaryMarkerIn('no instruction here')).toBeNull();
    expect(otherMarker(MARKER)).toBe('KQZV_REQ_7_00042');
  });

  it('begins the visible answer with the marker, after the reasoning, as one token', async () => {
    const r = await postStream(chat, body(true));
    expect(contentOf(r.events)).toBe(`${MARKER} tok tok tok `);
    expect(JSON.parse(r.events.at(-2)!).usage.completion_tokens).toBe(6);
    const whole = await postJson(chat, body(false));
    expect((whole.json as any).choices[0].message.content).toBe(`${MARKER} tok tok tok `);
  });

  it('the canary fault answers with another request marker', async () => {
    const r = await postStream(chat, body(true), { 'x-sim-fault': 'canary' });
    expect(contentOf(r.events)).toBe('KQZV_REQ_7_00042 tok tok tok ');
  });
});
