// engine-sim's Anthropic Messages API checked by the official Anthropic TypeScript SDK as a
// client: its stream is accepted event by event and assembled into the same message a
// non-streamed request returns, thinking block, text and usage included, with the token counts
// engine-sim charged.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimServer } from '../sim/server.js';
import { startSim } from '../sim/server.js';
import { countTokens } from '../sim/tokenizer.js';

const PROMPT = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen';

describe('engine-sim /v1/messages, read by the official Anthropic SDK', () => {
  let sim: SimServer;
  let client: Anthropic;
  beforeAll(async () => {
    sim = await startSim({ host: '127.0.0.1', reasoningTokens: 2, enablePrefixCaching: true });
    client = new Anthropic({ apiKey: 'test-key', baseURL: sim.url, maxRetries: 0 });
  });
  afterAll(() => sim?.close());

  it('streams a message the SDK assembles: thinking then text, stop reason and usage as charged', async () => {
    const stream = client.messages.stream({
      model: 'loadfleet-sim',
      max_tokens: 8,
      system: 'Be brief.',
      messages: [{ role: 'user', content: PROMPT }],
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const message = await stream.finalMessage();
    const output = message.usage.output_tokens;
    expect(output).toBeGreaterThanOrEqual(1);
    expect(output).toBeLessThanOrEqual(8);
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(types.filter((t) => t === 'message_delta')).toHaveLength(1);
    // The first two tokens are thinking, the rest text; one token each.
    const thinking = message.content.find((b) => b.type === 'thinking');
    const text = message.content.find((b) => b.type === 'text');
    expect(thinking?.type === 'thinking' && thinking.thinking).toBe('think '.repeat(Math.min(2, output)));
    expect(thinking?.type === 'thinking' && thinking.signature.length).toBeGreaterThan(0);
    expect(text?.type === 'text' ? text.text : undefined).toBe(output > 2 ? 'tok '.repeat(output - 2) : undefined);
    expect(message.stop_reason).toBe(output === 8 ? 'max_tokens' : 'end_turn');
    // Input as engine-sim counts it (system text included), uncached plus read from the cache.
    const input = message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0);
    expect(input).toBe(countTokens('Be brief.') + countTokens(PROMPT));
  });

  it('answers the same request whole when not streamed; the repeat reads its prompt from the prefix cache', async () => {
    const request = { model: 'loadfleet-sim', max_tokens: 8, system: 'Be brief.', messages: [{ role: 'user' as const, content: PROMPT }] };
    const streamed = await client.messages.stream(request).finalMessage();
    const whole = await client.messages.create(request);
    expect(whole.type).toBe('message');
    expect(whole.role).toBe('assistant');
    expect(whole.content.map((b) => b.type)).toEqual(streamed.content.map((b) => b.type));
    expect(whole.content.map((b) => (b.type === 'text' ? b.text : b.type === 'thinking' ? b.thinking : ''))).toEqual(
      streamed.content.map((b) => (b.type === 'text' ? b.text : b.type === 'thinking' ? b.thinking : '')),
    );
    expect(whole.usage.output_tokens).toBe(streamed.usage.output_tokens);
    expect(whole.usage.input_tokens + (whole.usage.cache_read_input_tokens ?? 0)).toBe(countTokens('Be brief.') + countTokens(PROMPT));
    // The same prompt again: its full 16-token blocks come from the cache.
    expect(whole.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(16);
  });

  it('streams a tool call the SDK assembles into a tool_use block with parsed input, stopping with "tool_use"', async () => {
    const tools = [{ name: 'lookup', description: 'Find a record.', input_schema: { type: 'object' as const, properties: {} } }];
    const stream = client.messages.stream({
      model: 'loadfleet-sim',
      max_tokens: 6,
      tools,
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: PROMPT }],
      ignore_eos: true,
    } as never);
    const message = await stream.finalMessage();
    // Two thinking tokens, then the call: its input is the four remaining tokens' fragments, valid JSON.
    const call = message.content.find((b) => b.type === 'tool_use');
    expect(call).toMatchObject({ type: 'tool_use', name: 'lookup' });
    expect(call?.type === 'tool_use' && call.input).toEqual({ input: 'tok tok ' });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage.output_tokens).toBe(6);
    const whole = await client.messages.create({
      model: 'loadfleet-sim',
      max_tokens: 6,
      tools,
      messages: [{ role: 'user', content: PROMPT }],
    });
    expect(whole.content.find((b) => b.type === 'tool_use')).toMatchObject({ type: 'tool_use', name: 'lookup' });
    expect(whole.stop_reason).toBe('tool_use');
  });

  it('reads a loop turn (tool_use and tool_result blocks) and charges an image block by its size', async () => {
    const turn = (content: never) =>
      client.messages.create({
        model: 'loadfleet-sim',
        max_tokens: 2,
        messages: [
          { role: 'user', content: 'find it' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'a' } }] },
          { role: 'user', content },
        ],
      });
    const result = await turn([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'one two three' }] as never);
    expect(result.usage.input_tokens + (result.usage.cache_read_input_tokens ?? 0)).toBe(
      countTokens('find it') + countTokens(JSON.stringify({ q: 'a' })) + countTokens('one two three'),
    );
    // A 56×28 PNG is 2×1 image tokens.
    const png = Buffer.alloc(24);
    png.write('\x89PNG\r\n\x1a\n', 0, 'latin1');
    png.writeUInt32BE(56, 16);
    png.writeUInt32BE(28, 20);
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } };
    const withImage = await turn([{ type: 'text', text: 'one two three' }, image] as never);
    expect(withImage.usage.input_tokens + (withImage.usage.cache_read_input_tokens ?? 0)).toBe(
      result.usage.input_tokens + (result.usage.cache_read_input_tokens ?? 0) + 2,
    );
    const bad = turn([{ type: 'image', source: { type: 'url', url: 'http://x/y.png' } }] as never);
    await expect(bad).rejects.toMatchObject({ status: 400 });
  });

  it("refuses a body without max_tokens with a 400 the SDK raises as the API's error", async () => {
    const missing = client.messages.create({ model: 'loadfleet-sim', messages: [{ role: 'user', content: 'x' }] } as never);
    await expect(missing).rejects.toMatchObject({ status: 400 });
  });
});
