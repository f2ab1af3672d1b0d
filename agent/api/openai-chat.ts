// POST {base}/chat/completions with one user message; text arrives in delta.content and, on
// reasoning models, delta.reasoning_content (or delta.reasoning on some servers).
import type { ApiAdapter } from './adapter.js';
import { commonFields, firstChoice, splitTemplate, textOf } from './adapter.js';

/** The chat completions API. */
export const openaiChat: ApiAdapter = {
  path: '/chat/completions',
  patterns: {
    content: /"content":\s*"[^"]/,
    reasoning: /"(?:reasoning_content|reasoning)":\s*"[^"]/,
  },
  bodyTemplate: (input) => splitTemplate((text) => ({ ...commonFields(input), messages: [{ role: 'user', content: text }] }), input),
  deltaText: (event) => {
    const delta = (firstChoice(event).delta ?? {}) as Record<string, unknown>;
    // Some servers send the same text under both names: counted once, or tokenizer-counted output doubles.
    const rc = textOf(delta.reasoning_content);
    const r = textOf(delta.reasoning);
    return { visible: textOf(delta.content), reasoning: rc === r ? rc : rc + r };
  },
};
