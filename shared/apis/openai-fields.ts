// What the OpenAI-compatible chat and completions APIs share: the body's fields besides its text
// and the usage object's shape. Not an API of its own: the registry skips it (it exports no `api`).
import type { BodyFields, UsageCounts } from './contract.js';
import { numberOrNull, objectOf } from './contract.js';

/** The common body fields of chat and completions: streamed, with usage, and exactly max_tokens when ignore_eos. */
export function openaiFields(input: BodyFields): Record<string, unknown> {
  return {
    model: input.model,
    max_tokens: input.maxTokens,
    stream: true,
    stream_options: { include_usage: true },
    ...(input.ignoreEos ? { ignore_eos: true } : {}),
  };
}

/** The usage of chat and completions: prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens. */
export function openaiUsage(event: unknown): UsageCounts {
  const usage = objectOf(objectOf(event).usage);
  return {
    prompt_tokens: numberOrNull(usage.prompt_tokens),
    completion_tokens: numberOrNull(usage.completion_tokens),
    cached_tokens: numberOrNull(objectOf(usage.prompt_tokens_details).cached_tokens),
  };
}
