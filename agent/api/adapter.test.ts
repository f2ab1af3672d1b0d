import { describe, expect, it } from 'vitest';
import { openaiChat } from '../../shared/apis/openai-chat.js';
import { openaiCompletions } from '../../shared/apis/openai-completions.js';
import { promptText } from '../../shared/prompt-text.js';
import { endpointPaths } from './adapter.js';

describe('endpointPaths', () => {
  it('puts both APIs and the warm-up under a real /v1 base (the completions warm-up once asked /models)', () => {
    expect(endpointPaths('http://h:8000/v1', openaiChat)).toEqual({
      origin: 'http://h:8000',
      path: '/v1/chat/completions',
      modelsPath: '/v1/models',
    });
    expect(endpointPaths('http://h:8000/v1/', openaiCompletions)).toEqual({
      origin: 'http://h:8000',
      path: '/v1/completions',
      modelsPath: '/v1/models',
    });
    expect(endpointPaths('https://gw.example/llm/v1', openaiCompletions).modelsPath).toBe('/llm/v1/models');
  });
});

// The adapters took over building the session bodies (conversations.ts) and reading usage and the
// end of the stream (client.ts, sse.ts): these are the exact bytes and values the code before the
// move produced.
describe('the response and body contract behind the adapters', () => {
  const fields = { model: 'm', maxTokens: 7, ignoreEos: true };
  const messages = [
    { role: 'user' as const, content: 'lf-r-c-0 a b' },
    { role: 'assistant' as const, content: 'tok tok' },
    { role: 'user' as const, content: 'c "d"' },
  ];
  it('builds byte-identical conversation bodies', () => {
    expect(openaiChat.bodyFromMessages(fields, messages)).toBe(
      '{"model":"m","max_tokens":7,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true,"messages":[{"role":"user","content":"lf-r-c-0 a b"},{"role":"assistant","content":"tok tok"},{"role":"user","content":"c \\"d\\""}]}',
    );
    expect(openaiCompletions.bodyFromMessages({ ...fields, ignoreEos: false }, messages)).toBe(
      '{"model":"m","max_tokens":7,"stream":true,"stream_options":{"include_usage":true},"prompt":"lf-r-c-0 a b\\ntok tok\\nc \\"d\\""}',
    );
  });
  it('builds byte-identical single-prompt bodies', () => {
    const input = { ...fields, prefix: 'p q', suffix: 'x y', canary: false };
    const text = promptText({ prefix: 'p q', suffix: 'x y' }, 'HEAD', false);
    const head = '{"model":"m","max_tokens":7,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true,';
    expect(openaiChat.bodyTemplate(input).join('HEAD')).toBe(`${head}"messages":[{"role":"user","content":${JSON.stringify(text)}}]}`);
    expect(openaiCompletions.bodyTemplate(input).join('HEAD')).toBe(`${head}"prompt":${JSON.stringify(text)}}`);
  });
  it('reads usage as before, with nulls where a count is missing', () => {
    const event = { choices: [], usage: { prompt_tokens: 40, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 16 } } };
    expect(openaiChat.usage(event)).toEqual({ prompt_tokens: 40, completion_tokens: 12, cached_tokens: 16 });
    expect(openaiCompletions.usage({ usage: { completion_tokens: 3 } })).toEqual({
      prompt_tokens: null,
      completion_tokens: 3,
      cached_tokens: null,
    });
  });
});

describe('tool-call deltas', () => {
  it('are classified apart from content and their argument fragments joined per call', async () => {
    const { classifyEvent, EventFlag } = await import('../sse.js');
    const { TextCapture } = await import('../text-capture.js');
    const ev = (calls: object[]) => JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: calls } }] });
    const first = ev([{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a": ' } }]);
    expect(classifyEvent(first, openaiChat.patterns)).toBe(EventFlag.TOOL_CALL);
    const capture = new TextCapture(openaiChat);
    capture.add(first);
    capture.add(
      ev([
        { index: 0, function: { arguments: '1}' } },
        { index: 1, function: { name: 'g', arguments: '{"b' } },
      ]),
    );
    const text = capture.text();
    expect(text.toolArguments).toEqual(['{"a": 1}', '{"b']);
    expect(text.visible).toBe('');
  });
});
