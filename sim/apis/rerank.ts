// POST /v1/rerank (and /rerank, /v2/rerank as vLLM serves it): a query and documents, answered
// with one relevance score per document. Cost model (stated in PROFILE.md and docs/apis.md): a
// cross-encoder scores each (query, document) pair as one sequence, so a request is one engine
// job that prefills every pair's tokens (query + document, once per document) and finishes in the
// step that completes the prefill, as an embeddings request does (openai-embeddings.ts), on the same
// engine as generation. usage.total_tokens is that sum, as vLLM reports it. Scores are derived
// from each pair's text hash (deterministic, in [0, 1)); results are sorted by score, best first.
import type { ServedModel } from '../openai.js';
import { ApiError } from '../openai.js';
import { countTokens, fnv1a32 } from '../tokenizer.js';
import type { SimPoolingApi } from './contract.js';

/** A validated rerank request. */
export interface RerankRequest {
  query: string;
  documents: string[];
  /** Tokens of every (query, document) pair, summed. */
  promptTokens: number;
  topN: number;
}

const invalid = (message: string, param: string): ApiError => new ApiError(400, message, 'invalid_request_error', 'invalid_value', param);

/** Validates a rerank body: a string query and a non-empty array of string (or {text}) documents, each pair within the context. */
export function parseRerankRequest(body: Record<string, unknown>, served: ServedModel): RerankRequest {
  const model = body['model'];
  if (model !== undefined && model !== null && model !== served.model)
    throw new ApiError(404, `The model \`${String(model)}\` does not exist.`, 'invalid_request_error', 'model_not_found', 'model');
  const query = body['query'];
  if (typeof query !== 'string') throw invalid('query must be a string', 'query');
  const docs = body['documents'];
  if (!Array.isArray(docs) || docs.length === 0) throw invalid('documents must be a non-empty array', 'documents');
  const documents = docs.map((d: unknown, i) => {
    const text = typeof d === 'string' ? d : (d as { text?: unknown } | null)?.text;
    if (typeof text !== 'string') throw invalid(`documents[${i}] must be a string or {"text": …}`, `documents[${i}]`);
    return text;
  });
  const queryTokens = countTokens(query);
  const pairs = documents.map((d) => queryTokens + countTokens(d));
  pairs.forEach((n, i) => {
    if (n > served.maxModelLen)
      throw new ApiError(
        400,
        `This model's maximum context length is ${served.maxModelLen} tokens. However, the query with documents[${i}] has ${n} tokens.`,
        'invalid_request_error',
        'context_length_exceeded',
        'documents',
      );
  });
  const topN = body['top_n'] ?? documents.length;
  if (typeof topN !== 'number' || !Number.isInteger(topN) || topN < 1) throw invalid('top_n must be a positive integer', 'top_n');
  return { query, documents, promptTokens: pairs.reduce((a, b) => a + b, 0), topN: Math.min(topN, documents.length) };
}

/** The response body (vLLM's rerank shape). */
export function rerankBody(request: RerankRequest, model: string, id: string): object {
  const scored = request.documents.map((text, index) => ({
    index,
    document: { text },
    relevance_score: fnv1a32(`${request.query}\n${text}`) / 0x100000000,
  }));
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  return { id, model, usage: { total_tokens: request.promptTokens }, results: scored.slice(0, request.topN) };
}

let rerankIds = 0;

/** The rerank API (vLLM serves it at all three paths). */
export const api: SimPoolingApi = {
  kind: 'pooling',
  name: 'rerank',
  paths: ['/v1/rerank', '/rerank', '/v2/rerank'],
  read: (body, served) => {
    const request = parseRerankRequest(body, served);
    const id = `rerank-sim${String(++rerankIds).padStart(6, '0')}`;
    return { promptTokens: request.promptTokens, answer: () => rerankBody(request, served.model, id) };
  },
};
