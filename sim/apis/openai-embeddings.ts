// POST /v1/embeddings: validation (vLLM-like errors), the cost charged to the engine, and the body.
// Cost model (stated in PROFILE.md and docs/apis.md): an embeddings request is one engine job that
// prefills the tokens of all its inputs and finishes in the step that completes the prefill (one
// "token", never streamed), on the same engine and under the same scheduler as generation — as
// vLLM runs a pooling model's requests — so a batch of embeddings takes slots and prefill budget
// from concurrent chat and shows up in its TTFT. Each input's vector is derived from its text's
// hash (deterministic, unit length), EMBEDDING_DIMS floats, as floats or base64 float32. The
// engine job is prefill-job.ts's.
import type { ServedModel } from '../openai.js';
import { ApiError } from '../openai.js';
import { countTokens, fnv1a32 } from '../tokenizer.js';
import type { SimPoolingApi } from './contract.js';

/** Length of every embedding vector engine-sim returns. */
export const EMBEDDING_DIMS = 64;

/** A validated embeddings request. */
export interface EmbeddingsRequest {
  inputs: string[];
  /** Tokens of each input. */
  inputTokens: number[];
  promptTokens: number;
  base64: boolean;
}

const invalid = (message: string, param: string): ApiError => new ApiError(400, message, 'invalid_request_error', 'invalid_value', param);

/** Validates an embeddings body: `input` is a string or a non-empty array of strings, each within the context. */
export function parseEmbeddingsRequest(body: Record<string, unknown>, served: ServedModel): EmbeddingsRequest {
  const model = body['model'];
  if (model !== undefined && model !== null && model !== served.model)
    throw new ApiError(404, `The model \`${String(model)}\` does not exist.`, 'invalid_request_error', 'model_not_found', 'model');
  const input = body['input'];
  const inputs = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(inputs) || inputs.length === 0) throw invalid('input must be a string or a non-empty array of strings', 'input');
  const texts = inputs.map((t: unknown, i) => {
    if (typeof t !== 'string') throw invalid(`input[${i}] must be a string`, `input[${i}]`);
    return t;
  });
  const inputTokens = texts.map(countTokens);
  inputTokens.forEach((n, i) => {
    if (n > served.maxModelLen)
      throw new ApiError(
        400,
        `This model's maximum context length is ${served.maxModelLen} tokens. However, input[${i}] has ${n} tokens.`,
        'invalid_request_error',
        'context_length_exceeded',
        'input',
      );
  });
  const format = body['encoding_format'] ?? 'float';
  if (format !== 'float' && format !== 'base64') throw invalid('encoding_format must be "float" or "base64"', 'encoding_format');
  return { inputs: texts, inputTokens, promptTokens: inputTokens.reduce((a, b) => a + b, 0), base64: format === 'base64' };
}

/** The vector of one input: seeded by its text, unit length. */
export function embeddingOf(text: string): number[] {
  let x = fnv1a32(text) || 1;
  const v: number[] = [];
  for (let i = 0; i < EMBEDDING_DIMS; i++) {
    // xorshift32: cheap, deterministic.
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    v.push(((x >>> 0) / 0xffffffff) * 2 - 1);
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((e) => Math.fround(e / norm));
}

/** The response body. */
export function embeddingsBody(request: EmbeddingsRequest, model: string): object {
  return {
    object: 'list',
    model,
    data: request.inputs.map((text, index) => {
      const v = embeddingOf(text);
      return { object: 'embedding', index, embedding: request.base64 ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v };
    }),
    usage: { prompt_tokens: request.promptTokens, total_tokens: request.promptTokens },
  };
}

/** The embeddings API. */
export const api: SimPoolingApi = {
  kind: 'pooling',
  name: 'embeddings',
  paths: ['/v1/embeddings'],
  read: (body, served) => {
    const request = parseEmbeddingsRequest(body, served);
    return { promptTokens: request.promptTokens, answer: () => embeddingsBody(request, served.model) };
  },
};
