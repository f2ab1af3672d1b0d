// POST {base}/chat/completions with one user message (or a conversation); text arrives in
// delta.content and, on reasoning models, delta.reasoning_content (or delta.reasoning on some
// servers); the stream ends with `data: [DONE]` and usage comes in its own chunk before it.
import { API_METRICS } from '../../shared/api-kinds.js';
import type { ApiAdapter } from './adapter.js';
import { commonFields, firstChoice, objectOf, openaiUsage, splitTemplate, textOf } from './adapter.js';

/** The chat completions API. */
export const openaiChat: ApiAdapter = {
  path: '/chat/completions',
  patterns: {
    content: /"content":\s*"[^"]/,
    reasoning: /"(?:reasoning_content|reasoning)":\s*"[^"]/,
    toolCall: /"tool_calls":\s*\[\s*\{/,
    done: '[DONE]',
    usage: /"usage":\s*\{/,
  },
  metrics: API_METRICS.chat,
  bodyTemplate: (input) => splitTemplate((text) => ({ ...commonFields(input), messages: [{ role: 'user', content: text }] }), input),
  bodyFromMessages: (input, messages) => JSON.stringify({ ...commonFields(input), messages }),
  deltaText: (event) => {
    const delta = (firstChoice(event).delta ?? {}) as Record<string, unknown>;
    const text = { visible: textOf(delta.content), reasoning: textOf(delta.reasoning_content) + textOf(delta.reasoning) };
    if (!Array.isArray(delta.tool_calls)) return text;
    const toolArguments = delta.tool_calls.map((c: unknown, i) => {
      const call = objectOf(c);
      return { index: typeof call.index === 'number' ? call.index : i, arguments: textOf(objectOf(call.function).arguments) };
    });
    return { ...text, toolArguments };
  },
  usage: openaiUsage,
};

/** Chat offering tools: every body also carries them and tool_choice (the plan's prompt.tools). */
export function openaiChatWithTools(tools: readonly object[], toolChoice: string | undefined): ApiAdapter {
  const extra = { tools, ...(toolChoice !== undefined && { tool_choice: toolChoice }) };
  return {
    ...openaiChat,
    bodyTemplate: (input) =>
      splitTemplate((text) => ({ ...commonFields(input), messages: [{ role: 'user', content: text }], ...extra }), input),
    bodyFromMessages: (input, messages) => JSON.stringify({ ...commonFields(input), messages, ...extra }),
  };
}
