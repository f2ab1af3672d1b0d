import { describe, expect, it } from 'vitest';
import { openaiChat } from '../shared/apis/openai-chat.js';
import { openaiCompletions } from '../shared/apis/openai-completions.js';
import { classifyEvent, EventFlag, SseParser } from './sse.js';

const chunk = (delta: string): string =>
  `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":${delta},"finish_reason":null}]}`;

const STREAM = [
  ': keep-alive comment\n\n',
  `data: ${chunk('{"role":"assistant","content":""}')}\n\n`,
  `data: ${chunk('{"reasoning_content":"think"}')}\n\n`,
  `data:${chunk('{"content":"héllo \\"wörld\\" 日本"}')}\n\n`,
  'event: message\nid: 7\ndata: {"a":\ndata: 1}\n\n',
  `data: {"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}\n\n`,
  'data: [DONE]\n\n',
].join('');

const EXPECTED = [
  chunk('{"role":"assistant","content":""}'),
  chunk('{"reasoning_content":"think"}'),
  chunk('{"content":"héllo \\"wörld\\" 日本"}'),
  '{"a":\n1}',
  '{"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}',
  '[DONE]',
];

function parseAll(chunks: Uint8Array[]): string[] {
  const out: string[] = [];
  const p = new SseParser((d) => out.push(d));
  for (const c of chunks) p.push(c);
  return out;
}

describe('SSE parser', () => {
  const bytes = Buffer.from(STREAM, 'utf8');

  it('parses a whole stream', () => {
    expect(parseAll([bytes])).toEqual(EXPECTED);
  });

  it('gives the same events with the stream split at every byte boundary (also inside UTF-8 characters)', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(parseAll([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(EXPECTED);
    }
  });

  it('gives the same events fed one byte at a time', () => {
    expect(parseAll(Array.from(bytes, (b) => Uint8Array.of(b)))).toEqual(EXPECTED);
  });

  it('handles CRLF line endings, split at every boundary', () => {
    const crlf = Buffer.from(STREAM.replace(/\n/g, '\r\n'), 'utf8');
    for (let cut = 1; cut < crlf.length; cut++) expect(parseAll([crlf.subarray(0, cut), crlf.subarray(cut)])).toEqual(EXPECTED);
  });

  it('reports a partial event left at the end of a cut stream', () => {
    const p = new SseParser(() => {});
    p.push(Buffer.from('data: {"choices":[{"delta":{"content":"to'));
    expect(p.hasPartial()).toBe(true);
  });
});

describe('event classification without JSON parsing', () => {
  const chat = openaiChat.patterns;
  it('tells content, reasoning, empty, usage, done, error and malformed apart', () => {
    expect(classifyEvent(chunk('{"content":"x"}'), chat)).toBe(EventFlag.CONTENT);
    expect(classifyEvent(chunk('{"content": "x"}'), chat)).toBe(EventFlag.CONTENT);
    expect(classifyEvent(chunk('{"content":""}'), chat)).toBe(0);
    expect(classifyEvent(chunk('{"content":null}'), chat)).toBe(0);
    expect(classifyEvent(chunk('{"content":"\\"q"}'), chat)).toBe(EventFlag.CONTENT);
    expect(classifyEvent(chunk('{"reasoning_content":"r"}'), chat)).toBe(EventFlag.REASONING);
    expect(classifyEvent(chunk('{"reasoning":"r","content":""}'), chat)).toBe(EventFlag.REASONING);
    expect(classifyEvent('{"choices":[],"usage":{"prompt_tokens":1}}', chat)).toBe(EventFlag.USAGE);
    expect(classifyEvent('[DONE]', chat)).toBe(EventFlag.DONE);
    expect(classifyEvent('{"error":{"message":"boom"}}', chat)).toBe(EventFlag.ERROR);
    expect(classifyEvent('{"choices":[{"delta":{"content":"to', chat)).toBe(EventFlag.MALFORMED);
    expect(classifyEvent('not json', chat)).toBe(EventFlag.MALFORMED);
  });
  it('reads completions text deltas', () => {
    const c = openaiCompletions.patterns;
    expect(classifyEvent('{"choices":[{"index":0,"text":"tok ","finish_reason":null}]}', c)).toBe(EventFlag.CONTENT);
    expect(classifyEvent('{"choices":[{"index":0,"text":"","finish_reason":"length"}]}', c)).toBe(0);
  });
});
