// API adapters by the plan's `target.api`.
import type { ApiKind, TrafficClass } from '../../shared/plan.js';
import type { ApiAdapter } from './adapter.js';
import { openaiChat, openaiChatWith } from './openai-chat.js';
import { openaiCompletions } from './openai-completions.js';
import { openaiEmbeddings } from './openai-embeddings.js';
import { openaiResponses } from './openai-responses.js';
import { rerank } from './rerank.js';

/** The streamed APIs by their plan name (embeddings depends on the class: adapterFor). */
export const API_ADAPTERS: Record<Exclude<ApiKind, 'embeddings' | 'rerank'>, ApiAdapter> = {
  chat: openaiChat,
  completions: openaiCompletions,
  responses: openaiResponses,
};

/** The adapter of a class's API (class.api, else target.api). */
export function adapterFor(api: ApiKind, cls: TrafficClass): ApiAdapter {
  if (api === 'embeddings') return openaiEmbeddings(cls.prompt.batch_size ?? 1);
  if (api === 'rerank') return rerank(cls.prompt.batch_size ?? 1);
  const { tools, images, tool_choice: toolChoice } = cls.prompt;
  if (api === 'chat' && (tools || images)) {
    const definitions = tools?.map((t) => ({ type: 'function', function: { parameters: { type: 'object', properties: {} }, ...t } }));
    return openaiChatWith({
      ...(definitions && { tools: definitions }),
      ...(toolChoice !== undefined && { toolChoice }),
      ...(images && { images: images.count }),
    });
  }
  return API_ADAPTERS[api];
}
