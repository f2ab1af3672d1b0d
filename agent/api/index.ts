// API adapters by the plan's `target.api`.
import type { ApiKind, TrafficClass } from '../../shared/plan.js';
import type { ApiAdapter } from './adapter.js';
import { openaiChat, openaiChatWithTools } from './openai-chat.js';
import { openaiCompletions } from './openai-completions.js';
import { openaiEmbeddings } from './openai-embeddings.js';
import { openaiResponses } from './openai-responses.js';

/** The streamed APIs by their plan name (embeddings depends on the class: adapterFor). */
export const API_ADAPTERS: Record<Exclude<ApiKind, 'embeddings'>, ApiAdapter> = {
  chat: openaiChat,
  completions: openaiCompletions,
  responses: openaiResponses,
};

/** The adapter of a class's API (class.api, else target.api). */
export function adapterFor(api: ApiKind, cls: TrafficClass): ApiAdapter {
  if (api === 'embeddings') return openaiEmbeddings(cls.prompt.batch_size ?? 1);
  const tools = cls.prompt.tools;
  if (api === 'chat' && tools) {
    const definitions = tools.map((t) => ({ type: 'function', function: { parameters: { type: 'object', properties: {} }, ...t } }));
    return openaiChatWithTools(definitions, cls.prompt.tool_choice);
  }
  return API_ADAPTERS[api];
}
