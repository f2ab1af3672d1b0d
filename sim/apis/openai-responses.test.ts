import { describe, expect, it } from 'vitest';
import { usageOf } from './contract.js';
import { ResponsesStream } from './openai-responses.js';

const who = { endpoint: 'responses' as const, id: 'resp-sim1', created: 1, model: 'm' };

function events(run: (s: ResponsesStream) => void): { type: string; [k: string]: unknown }[] {
  let out = '';
  run(new ResponsesStream(who, (c) => (out += c)));
  return out
    .split('\n\n')
    .filter((e) => e !== '')
    .map((e) => {
      const [event, data] = e.split('\n');
      const parsed = JSON.parse(data!.slice('data: '.length));
      expect(event).toBe(`event: ${parsed.type}`);
      return parsed;
    });
}

describe('the Responses API stream', () => {
  it('opens, streams reasoning then text, closes each item once and ends with usage', () => {
    const evs = events((s) => {
      s.start();
      s.token('think ', true);
      s.token('tok ', false);
      s.token('tok ', false);
      s.finish('length', usageOf(5, 3));
    });
    expect(evs.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.incomplete',
    ]);
    expect(evs.map((e) => e.sequence_number)).toEqual(evs.map((_, i) => i));
    const last = evs.at(-1)!.response as Record<string, unknown>;
    expect(last).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(last.usage).toEqual({ input_tokens: 5, output_tokens: 3, output_tokens_details: { reasoning_tokens: 1 }, total_tokens: 8 });
    expect(evs.find((e) => e.type === 'response.output_text.done')!.text).toBe('tok tok ');
  });

  it('ends a stopped answer with response.completed, without usage under the no-usage fault', () => {
    const evs = events((s) => {
      s.start();
      s.token('tok ', false);
      s.finish('stop', undefined);
    });
    expect(evs.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'completed', usage: null } });
  });
});
