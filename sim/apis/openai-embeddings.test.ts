import { describe, expect, it } from 'vitest';
import type { ApiError } from '../openai.js';
import { embeddingsJob } from '../prefill-job.js';
import { EMBEDDING_DIMS, embeddingsBody, parseEmbeddingsRequest } from './openai-embeddings.js';

const served = { model: 'm', maxModelLen: 8 };

describe('engine-sim embeddings', () => {
  it('counts each input and charges the engine their whole prefill plus one step', () => {
    const req = parseEmbeddingsRequest({ model: 'm', input: ['a b c', 'd e'] }, served);
    expect(req.inputTokens).toEqual([3, 2]);
    const job = embeddingsJob(req, 0, () => {});
    expect(job).toMatchObject({ promptTokens: 5, outputTokens: 1 });
    expect(job.blockHashes).toBeUndefined();
  });

  it('answers one unit vector per input, as floats or base64 float32, with prompt usage', () => {
    const req = parseEmbeddingsRequest({ input: 'a b', encoding_format: 'base64' }, served);
    const body = embeddingsBody(req, 'm') as { data: { index: number; embedding: string }[]; usage: unknown };
    expect(body.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
    const bytes = Buffer.from(body.data[0]!.embedding, 'base64');
    const v = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    expect(v.length).toBe(EMBEDDING_DIMS);
    expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    const floats = embeddingsBody(parseEmbeddingsRequest({ input: ['a b', 'a b'] }, served), 'm') as { data: { embedding: number[] }[] };
    expect(floats.data[0]!.embedding).toEqual(floats.data[1]!.embedding);
    expect(Array.from(v)).toEqual(floats.data[0]!.embedding);
  });

  it('refuses what vLLM refuses', () => {
    const code = (body: Record<string, unknown>) => {
      try {
        parseEmbeddingsRequest(body, served);
      } catch (err) {
        return (err as ApiError).code;
      }
      return null;
    };
    expect(code({ input: [] })).toBe('invalid_value');
    expect(code({ input: [1] })).toBe('invalid_value');
    expect(code({ input: 'a b c d e f g h i' })).toBe('context_length_exceeded');
    expect(code({ model: 'other', input: 'a' })).toBe('model_not_found');
    expect(code({ input: 'a', encoding_format: 'int8' })).toBe('invalid_value');
  });
});
