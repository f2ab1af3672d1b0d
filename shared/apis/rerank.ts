// POST {base}/rerank (vLLM's rerank API, Jina- and Cohere-compatible: with base …/v1 it is
// /v1/rerank) with a `query` and `documents`, batch_size texts; the answer is one JSON body whose
// `results` hold one relevance score per document and whose usage has total_tokens (every
// (query, document) pair as the server scored it). The query is fixed (RERANK_QUERY); the
// documents differ by their head's suffix, as embeddings' inputs do, so none answers another.
import type { ApiAdapter, ApiDescriptor, ApiModule } from './contract.js';
import { batchTexts, bearerAuth, NEVER, numberOrNull, ONE_BODY_NOT_APPLICABLE, objectOf, splitTemplate } from './contract.js';

/**
 * The query of every rerank request: fixed, so each (query, document) pair costs the document's
 * tokens plus the same few (the server's pair template, separators included, is its own).
 */
export const RERANK_QUERY = 'Which passage is most relevant?';

const descriptor: ApiDescriptor = {
  name: 'rerank',
  order: 4,
  summary: "`rerank` (/rerank: vLLM's and Jina's query + documents, where the server has it)",
  path: '/rerank',
  metrics: {
    streamed: false,
    notApplicable: ONE_BODY_NOT_APPLICABLE,
    note: 'a rerank request (a query and a batch of documents) is answered in one JSON body of relevance scores: it has no first token and generates none, so only e2e, e2e_from_intended and schedule_lag exist (with documents and scored tokens per second as its throughput)',
  },
  chatTemplated: false,
  batched: true,
  perRequest: false,
  sessions: false,
  tools: false,
  images: false,
  doctorProbe: false,
  authHeaders: bearerAuth,
};

/** The rerank API for requests of `batchSize` documents. */
export function rerank(batchSize: number): ApiAdapter {
  return {
    descriptor,
    path: descriptor.path,
    patterns: { content: NEVER, reasoning: null, usage: NEVER },
    metrics: descriptor.metrics,
    batchSize,
    bodyTemplate: (input) =>
      splitTemplate((text) => {
        const documents = batchTexts(text, batchSize);
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

/** The rerank API in the registry. */
export const api: ApiModule = { descriptor, adapter: (o) => rerank(o.batchSize) };
