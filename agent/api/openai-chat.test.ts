import { describe, expect, it } from 'vitest';
import { imageMarker } from '../../shared/apis/contract.js';
import { openaiChat, openaiChatWith } from '../../shared/apis/openai-chat.js';

const delta = (d: Record<string, unknown>) => ({ choices: [{ index: 0, delta: d }] });

describe('chat deltas', () => {
  it('takes one reasoning source when a server sends the same text as reasoning_content and reasoning', () => {
    expect(openaiChat.deltaText(delta({ reasoning_content: 'think', reasoning: 'think' }))).toEqual({ visible: '', reasoning: 'think' });
  });
  it('reads either name alone, and keeps both when they differ', () => {
    expect(openaiChat.deltaText(delta({ reasoning_content: 'a' })).reasoning).toBe('a');
    expect(openaiChat.deltaText(delta({ reasoning: 'b' })).reasoning).toBe('b');
    expect(openaiChat.deltaText(delta({ reasoning_content: 'a', reasoning: 'b', content: 'c' }))).toEqual({
      visible: 'c',
      reasoning: 'ab',
    });
  });
});

describe('a conversation body with tools and images (per-request bodies)', () => {
  const fields = { model: 'm', maxTokens: 4, ignoreEos: true };
  const messages = [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'first' },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'second' },
  ];

  it('offers the tools with every body and puts the image parts on the last user message only', () => {
    const adapter = openaiChatWith({ tools: [{ type: 'function', function: { name: 'f' } }], toolChoice: 'auto', images: 2 });
    const body = JSON.parse(adapter.bodyFromMessages(fields, messages));
    expect(body.tools).toEqual([{ type: 'function', function: { name: 'f' } }]);
    expect(body.tool_choice).toBe('auto');
    expect(body.messages.slice(0, 3)).toEqual(messages.slice(0, 3));
    expect(body.messages[3]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'second' },
        { type: 'image_url', image_url: { url: imageMarker(0) } },
        { type: 'image_url', image_url: { url: imageMarker(1) } },
      ],
    });
  });

  it('without images or tools is byte for byte the plain chat body', () => {
    expect(openaiChatWith({}).bodyFromMessages(fields, messages)).toBe(openaiChat.bodyFromMessages(fields, messages));
  });
});
