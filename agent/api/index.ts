// API adapters by the plan's `target.api`.
import type { ApiKind } from '../../shared/plan.js';
import type { ApiAdapter } from './adapter.js';
import { openaiChat } from './openai-chat.js';
import { openaiCompletions } from './openai-completions.js';
import { openaiResponses } from './openai-responses.js';

/** Every supported API by its plan name. */
export const API_ADAPTERS: Record<ApiKind, ApiAdapter> = {
  chat: openaiChat,
  completions: openaiCompletions,
  responses: openaiResponses,
};
