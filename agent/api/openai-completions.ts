// POST {base}/completions with a prompt string; text arrives in choices[].text.
import type { ApiAdapter } from './adapter.js';
import { commonFields, firstChoice, splitTemplate, textOf } from './adapter.js';

/** The (legacy) completions API. */
export const openaiCompletions: ApiAdapter = {
  path: '/completions',
  patterns: { content: /"text":\s*"[^"]/, reasoning: null },
  bodyTemplate: (input) => splitTemplate((text) => ({ ...commonFields(input), prompt: text }), input),
  deltaText: (event) => ({ visible: textOf(firstChoice(event).text), reasoning: '' }),
};
