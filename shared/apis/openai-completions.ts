// POST {base}/completions with a prompt string; text arrives in choices[].text; the stream ends
// with `data: [DONE]`, usage as for chat.
import type { ApiAdapter, ApiDescriptor, ApiModule } from './contract.js';
import { bearerAuth, completionPrompt, firstChoice, STREAMED, splitTemplate, textOf } from './contract.js';
import { openaiFields, openaiUsage } from './openai-fields.js';

const descriptor: ApiDescriptor = {
  name: 'completions',
  order: 1,
  summary: '`completions` (/completions)',
  path: '/completions',
  metrics: STREAMED,
  chatTemplated: false,
  batched: false,
  perRequest: true,
  sessions: true,
  tools: false,
  images: false,
  doctorProbe: true,
  authHeaders: bearerAuth,
};

/** The (legacy) completions API. */
export const openaiCompletions: ApiAdapter = {
  descriptor,
  path: descriptor.path,
  patterns: { content: /"text":\s*"[^"]/, reasoning: null, terminator: '[DONE]', usage: /"usage":\s*\{/ },
  metrics: descriptor.metrics,
  bodyTemplate: (input) => splitTemplate((text) => ({ ...openaiFields(input), prompt: text }), input),
  // The completions API has no roles: a conversation is its messages' text, one per line.
  bodyFromMessages: (input, messages) => JSON.stringify({ ...openaiFields(input), prompt: completionPrompt(messages) }),
  deltaText: (event) => ({ visible: textOf(firstChoice(event).text), reasoning: '' }),
  usage: openaiUsage,
};

/** The completions API in the registry. */
export const api: ApiModule = { descriptor, adapter: () => openaiCompletions };
