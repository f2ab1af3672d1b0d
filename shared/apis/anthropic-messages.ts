// POST {base}/messages (the Anthropic Messages API; with base …/v1 it is /v1/messages), served by
// Anthropic and by vLLM, SGLang and llama.cpp's server. The key goes in `x-api-key` and every
// request names the API version in `anthropic-version`. The body has `messages` (a conversation's
// system turns go in `system`), `max_tokens` and `stream: true`. The stream is typed events, each
// `event: <type>` + `data: <json>`:
//
//   message_start        the message, with usage: input_tokens (and the cache's counts)
//   content_block_start  a block opens: `thinking` (reasoning) or `text`
//   content_block_delta  thinking_delta (delta.thinking: reasoning) or text_delta (delta.text)
//   content_block_stop   the block closes (a thinking block after its signature_delta)
//   message_delta        stop_reason, and usage: output_tokens (cumulative; newer servers repeat the input counts)
//   message_stop         the end of the stream
//
// with `ping` events anywhere and an `error` event on failure. Usage is split: input tokens come
// in message_start and output tokens in message_delta, and the agent folds the two. Anthropic's
// input_tokens leave out the prompt tokens read from or written to the cache, so the prompt is
// the three counts summed, and cache_read_input_tokens are the cached tokens.
import type { ApiAdapter, ApiDescriptor, ApiModule, BodyFields, ChatMessage, UsageCounts } from './contract.js';
import { numberOrNull, objectOf, STREAMED, splitTemplate, textOf } from './contract.js';

/** The API version every request names (the one the Messages API is documented under). */
export const ANTHROPIC_VERSION = '2023-06-01';

const descriptor: ApiDescriptor = {
  name: 'anthropic',
  order: 5,
  summary: '`anthropic` (/messages, the Anthropic Messages API)',
  path: '/messages',
  metrics: STREAMED,
  // `messages` is a conversation, rendered through the model's chat template.
  chatTemplated: true,
  batched: false,
  perRequest: true,
  sessions: true,
  tools: false,
  images: false,
  doctorProbe: false,
  authHeaders: (key) => ({ ...(key ? { 'x-api-key': key } : {}), 'anthropic-version': ANTHROPIC_VERSION }),
};

// Streamed, max_tokens, and exactly that many with ignore_eos (a vLLM sampling extension, as for
// chat: a plan sets ignore_eos false against a server that refuses unknown fields).
function fields(input: BodyFields): Record<string, unknown> {
  return { model: input.model, max_tokens: input.maxTokens, stream: true, ...(input.ignoreEos ? { ignore_eos: true } : {}) };
}

// The Messages API has no system role in `messages`: system turns are its `system` text.
function conversation(messages: readonly ChatMessage[]): Record<string, unknown> {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content);
  const turns = messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, content: m.content }));
  return { ...(system.length > 0 && { system: system.join('\n') }), messages: turns };
}

// The usage object of message_start (inside its message), of message_delta, or of a whole body.
function usageObject(event: Record<string, unknown>): Record<string, unknown> {
  return objectOf(event.type === 'message_start' ? objectOf(event.message).usage : event.usage);
}

function usage(event: unknown): UsageCounts {
  const e = objectOf(event);
  const u = usageObject(e);
  const input = numberOrNull(u.input_tokens);
  const read = numberOrNull(u.cache_read_input_tokens);
  const written = numberOrNull(u.cache_creation_input_tokens);
  return {
    prompt_tokens: input === null ? null : input + (read ?? 0) + (written ?? 0),
    // message_start's output_tokens is a placeholder (0 or 1) before any is generated; the count is message_delta's.
    completion_tokens: e.type === 'message_start' ? null : numberOrNull(u.output_tokens),
    cached_tokens: read,
  };
}

/** The Anthropic Messages API. */
export const anthropicMessages: ApiAdapter = {
  descriptor,
  path: descriptor.path,
  patterns: {
    // The delta's type and a non-empty text, in either order (servers differ in key order).
    content: /^(?=.*"type":\s*"text_delta")(?=.*"text":\s*"[^"])/,
    reasoning: /^(?=.*"type":\s*"thinking_delta")(?=.*"thinking":\s*"[^"])/,
    doneEvent: /"type":\s*"message_stop"/,
    // A server that ends its streams the OpenAI way after message_stop.
    terminator: '[DONE]',
    usage: /"usage":\s*\{/,
    error: /^\{\s*"type":\s*"error"/,
  },
  metrics: descriptor.metrics,
  bodyTemplate: (input) => splitTemplate((text) => ({ ...fields(input), messages: [{ role: 'user', content: text }] }), input),
  bodyFromMessages: (input, messages) => JSON.stringify({ ...fields(input), ...conversation(messages) }),
  deltaText: (event) => {
    const e = objectOf(event);
    if (e.type !== 'content_block_delta') return { visible: '', reasoning: '' };
    const delta = objectOf(e.delta);
    if (delta.type === 'text_delta') return { visible: textOf(delta.text), reasoning: '' };
    if (delta.type === 'thinking_delta') return { visible: '', reasoning: textOf(delta.thinking) };
    return { visible: '', reasoning: '' };
  },
  usage,
};

/** The Anthropic Messages API in the registry. */
export const api: ApiModule = { descriptor, adapter: () => anthropicMessages };
