// POST {base}/rerank (vLLM's rerank API, Jina- and Cohere-compatible: with base …/v1 it is
// /v1/rerank) with a `query` and `documents`, batch_size texts; the answer is one JSON body whose
// `results` hold one relevance score per document and whose usage has total_tokens (every
// (query, document) pair as the server scored it). The query is fixed (RERANK_QUERY); the
// documents differ by their head's suffix, as embeddings' inputs do, so none answers another.
import { API_METRICS, batchInputHead, RERANK_QUERY } from '../../shared/api-kinds.js';
import type { ApiAdapter } from './adapter.js';
import { HEAD_MARK, numberOrNull, objectOf, splitTemplate } from './adapter.js';

// No event of a JSON body is ever classified; these patterns never match.
const NEVER = /(?!)/;

/** The rerank API for requests of `batchSize` documents. */
export function rerank(batchSize: number): ApiAdapter {
  return {
    path: '/rerank',
    patterns: { content: NEVER, reasoning: null, done: NEVER, usage: NEVER },
    metrics: API_METRICS.rerank,
    batchSize,
    bodyTemplate: (input) =>
      splitTemplate((text) => {
        const documents = Array.from({ length: batchSize }, (_, i) => text.split(HEAD_MARK).join(batchInputHead(HEAD_MARK, i)));
        return { model: input.model, query: RERANK_QUERY, documents, top_n: batchSize };
      }, input),
    bodyFromMessages: () => {
      throw new Error('the rerank API has no conversations (plan validation refuses sessions on it)');
    },
    deltaText: () => ({ visible: '', reasoning: '' }),
    // vLLM reports total_tokens only (Cohere: meta.billed_units); prompt_tokens where a server sends it.
    usage: (body) => {
      const usage = objectOf(objectOf(body).usage);
      return { prompt_tokens: numberOrNull(usage.prompt_tokens ?? usage.total_tokens), completion_tokens: null, cached_tokens: null };
    },
    items: (body) => {
      const results = objectOf(body).results;
      return Array.isArray(results) ? results.length : null;
    },
  };
}
