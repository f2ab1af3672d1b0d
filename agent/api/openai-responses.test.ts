import { describe, expect, it } from 'vitest';
import { openaiResponses } from '../../shared/apis/openai-responses.js';
import { classifyEvent, EventFlag } from '../sse.js';

const p = openaiResponses.patterns;

describe('the Responses API contract', () => {
  it('classifies its typed events without parsing: text, reasoning summaries, the end with usage, errors', () => {
    const delta = (type: string, d: string) =>
      `{"type":"${type}","sequence_number":4,"item_id":"m","output_index":0,"content_index":0,"delta":${JSON.stringify(d)},"logprobs":[]}`;
    expect(classifyEvent(delta('response.output_text.delta', 'Hi'), p)).toBe(EventFlag.CONTENT);
    expect(classifyEvent(delta('response.output_text.delta', ''), p)).toBe(0);
    // Key order differs between servers.
    expect(classifyEvent('{"delta":"x","type":"response.output_text.delta"}', p)).toBe(EventFlag.CONTENT);
    expect(classifyEvent(delta('response.reasoning_summary_text.delta', 'r'), p)).toBe(EventFlag.REASONING);
    expect(classifyEvent(delta('response.reasoning_text.delta', 'r'), p)).toBe(EventFlag.REASONING);
    // The done events repeat the whole text; they are not deltas.
    expect(classifyEvent('{"type":"response.output_text.done","text":"Hi there"}', p)).toBe(0);
    expect(classifyEvent('{"type":"response.created","response":{"status":"in_progress","usage":null}}', p)).toBe(0);
    const end = (type: string) => `{"type":"${type}","response":{"status":"x","output":[],"usage":{"input_tokens":40,"output_tokens":12}}}`;
    expect(classifyEvent(end('response.completed'), p)).toBe(EventFlag.USAGE | EventFlag.DONE);
    expect(classifyEvent(end('response.incomplete'), p)).toBe(EventFlag.USAGE | EventFlag.DONE);
    expect(classifyEvent('{"type":"response.failed","response":{"error":{"code":"server_error"}}}', p)).toBe(EventFlag.ERROR);
    expect(classifyEvent('{"type":"error","code":"x","message":"boom"}', p)).toBe(EventFlag.ERROR);
    // An answer that quotes an event type is escaped JSON text, not an event.
    expect(classifyEvent(delta('response.output_text.delta', '"type":"error"'), p)).toBe(EventFlag.CONTENT);
  });

  it('reads text and usage (input/output tokens, cached input) from parsed events', () => {
    expect(openaiResponses.deltaText({ type: 'response.output_text.delta', delta: 'tok ' })).toEqual({ visible: 'tok ', reasoning: '' });
    expect(openaiResponses.deltaText({ type: 'response.reasoning_summary_text.delta', delta: 'hm' })).toEqual({
      visible: '',
      reasoning: 'hm',
    });
    const completed = {
      type: 'response.completed',
      response: { usage: { input_tokens: 40, output_tokens: 12, input_tokens_details: { cached_tokens: 32 } } },
    };
    expect(openaiResponses.usage(completed)).toEqual({ prompt_tokens: 40, completion_tokens: 12, cached_tokens: 32 });
  });

  it('sends input and max_output_tokens, a string or the conversation', () => {
    const fields = { model: 'm', maxTokens: 7, ignoreEos: true };
    const body = JSON.parse(openaiResponses.bodyTemplate({ ...fields, prefix: '', suffix: 'a b', canary: false }).join('H'));
    expect(body).toMatchObject({ model: 'm', max_output_tokens: 7, stream: true, ignore_eos: true });
    expect(typeof body.input).toBe('string');
    expect(body.max_tokens).toBeUndefined();
    const conv = JSON.parse(openaiResponses.bodyFromMessages(fields, [{ role: 'user', content: 'x' }]));
    expect(conv.input).toEqual([{ role: 'user', content: 'x' }]);
  });
});
