// POST {base}/embeddings with `input` a list of batch_size texts; the answer is one JSON body
// (never streamed) whose `data` holds one vector per input and whose usage has prompt_tokens
// (and total_tokens), no completion. The inputs of one request differ by their head's suffix
// (`-0`, `-1`, …), so no server can answer one from another.
import type { ApiAdapter, ApiDescriptor, ApiModule } from './contract.js';
import { batchTexts, bearerAuth, NEVER, numberOrNull, ONE_BODY_NOT_APPLICABLE, objectOf, splitTemplate } from './contract.js';

const descriptor: ApiDescriptor = {
  name: 'embeddings',
  order: 3,
  summary: '`embeddings` (/embeddings)',
  path: '/embeddings',
  metrics: {
    streamed: false,
    notApplicable: ONE_BODY_NOT_APPLICABLE,
    note: 'an embeddings request is answered in one JSON body: it has no first token and generates none, so only e2e, e2e_from_intended and schedule_lag exist (with inputs and input tokens per second as its throughput)',
  },
  chatTemplated: false,
  batched: true,
  // A request is a batch of inputs that differ by their head, which a per-request body (one
  // conversation, counted whole) has no place for.
  perRequest: false,
  sessions: false,
  tools: false,
  images: false,
  doctorProbe: false,
  authHeaders: bearerAuth,
};

/** The embeddings API for requests of `batchSize` inputs. */
export function openaiEmbeddings(batchSize: number): ApiAdapter {
  return {
    descriptor,
    path: descriptor.path,
    patterns: { content: NEVER, reasoning: null, usage: NEVER },
    metrics: descriptor.metrics,
    batchSize,
    bodyTemplate: (input) =>
      splitTemplate((text) => {
        // The head mark stands once in `text`; each input gets it with its own suffix.
        const inputs = batchTexts(text, batchSize);
        return { model: input.model, input: inputs, encoding_format: 'float' };
      }, input),
    bodyFromMessages: () => {
      throw new Error('the embeddings API has no conversations (plan validation refuses sessions on it)');
    },
    deltaText: () => ({ visible: '', reasoning: '' }),
    usage: (body) => {
      const usage = objectOf(objectOf(body).usage);
      return { prompt_tokens: numberOrNull(usage.prompt_tokens), completion_tokens: null, cached_tokens: null };
    },
    items: (body) => {
      const data = objectOf(body).data;
      return Array.isArray(data) ? data.length : null;
    },
  };
}

/** The embeddings API in the registry. */
export const api: ApiModule = { descriptor, adapter: (o) => openaiEmbeddings(o.batchSize) };
