// POST {base}/completions with a prompt string; text arrives in choices[].text; the stream ends
// with `data: [DONE]`, usage as for chat.
import { API_METRICS } from '../../shared/api-kinds.js';
import { completionPrompt } from '../../shared/request-text.js';
import type { ApiAdapter } from './adapter.js';
import { commonFields, firstChoice, openaiUsage, splitTemplate, textOf } from './adapter.js';

/** The (legacy) completions API. */
export const openaiCompletions: ApiAdapter = {
  path: '/completions',
  patterns: { content: /"text":\s*"[^"]/, reasoning: null, done: '[DONE]', usage: /"usage":\s*\{/ },
  metrics: API_METRICS.completions,
  bodyTemplate: (input) => splitTemplate((text) => ({ ...commonFields(input), prompt: text }), input),
  // The completions API has no roles: a conversation is its messages' text, one per line.
  bodyFromMessages: (input, messages) => JSON.stringify({ ...commonFields(input), prompt: completionPrompt(messages) }),
  deltaText: (event) => ({ visible: textOf(firstChoice(event).text), reasoning: '' }),
  usage: openaiUsage,
};
