// POST {base}/embeddings with `input` a list of batch_size texts; the answer is one JSON body
// (never streamed) whose `data` holds one vector per input and whose usage has prompt_tokens
// (and total_tokens), no completion. The inputs of one request differ by their head's suffix
// (`-0`, `-1`, …), so no server can answer one from another.
import { API_METRICS, batchInputHead } from '../../shared/api-kinds.js';
import type { ApiAdapter } from './adapter.js';
import { HEAD_MARK, numberOrNull, objectOf, splitTemplate } from './adapter.js';

// No event of a JSON body is ever classified; these patterns never match.
const NEVER = /(?!)/;

/** The embeddings API for requests of `batchSize` inputs. */
export function openaiEmbeddings(batchSize: number): ApiAdapter {
  return {
    path: '/embeddings',
    patterns: { content: NEVER, reasoning: null, done: NEVER, usage: NEVER },
    metrics: API_METRICS.embeddings,
    batchSize,
    bodyTemplate: (input) =>
      splitTemplate((text) => {
        // The head mark stands once in `text`; each input gets it with its own suffix.
        const inputs = Array.from({ length: batchSize }, (_, i) => text.split(HEAD_MARK).join(batchInputHead(HEAD_MARK, i)));
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
