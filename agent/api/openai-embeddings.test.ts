import { describe, expect, it } from 'vitest';
import { openaiEmbeddings } from '../../shared/apis/openai-embeddings.js';

describe('the embeddings API contract', () => {
  it('sends batch_size inputs that differ only by their head suffix, and reads results and usage from the body', () => {
    const a = openaiEmbeddings(3);
    expect(a.metrics.streamed).toBe(false);
    const body = JSON.parse(
      a.bodyTemplate({ model: 'm', maxTokens: 1, ignoreEos: true, prefix: '', suffix: 'x y', canary: false }).join('lf-7'),
    );
    expect(body.model).toBe('m');
    expect(body.input).toHaveLength(3);
    expect(new Set(body.input).size).toBe(3);
    expect(body.input.map((t: string) => t.replace(/lf-7-\d/, 'H'))).toEqual(Array(3).fill(body.input[0].replace('lf-7-0', 'H')));
    expect(body.max_tokens).toBeUndefined();
    const answer = { data: [{}, {}, {}], usage: { prompt_tokens: 9, total_tokens: 9 } };
    expect(a.items!(answer)).toBe(3);
    expect(a.usage(answer)).toEqual({ prompt_tokens: 9, completion_tokens: null, cached_tokens: null });
    expect(a.items!({})).toBeNull();
  });
});
