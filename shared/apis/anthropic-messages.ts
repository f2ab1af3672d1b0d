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
//
// Tools are offered as `tools: [{ name, description, input_schema }]`; a call streams as a
// `tool_use` block (content_block_start carries its id and name) whose arguments arrive as
// input_json_delta fragments (`partial_json`), and the message stops with stop_reason "tool_use".
// An agentic loop sends the call back as the assistant's tool_use block and its result as a
// `tool_result` block in the next user message. Images are `image` blocks with a base64 source.
import type { AdapterOptions, ApiAdapter, ApiDescriptor, ApiModule, BodyFields, ChatMessage, UsageCounts } from './contract.js';
import { imageDataMarker, imageMediaMarker, numberOrNull, objectOf, STREAMED, splitTemplate, textOf } from './contract.js';

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
  tools: true,
  images: true,
  doctorProbe: true,
  authHeaders: (key) => ({ ...(key ? { 'x-api-key': key } : {}), 'anthropic-version': ANTHROPIC_VERSION }),
};

// Streamed, max_tokens, and exactly that many with ignore_eos (a vLLM sampling extension, as for
// chat: a plan sets ignore_eos false against a server that refuses unknown fields).
function fields(input: BodyFields): Record<string, unknown> {
  return { model: input.model, max_tokens: input.maxTokens, stream: true, ...(input.ignoreEos ? { ignore_eos: true } : {}) };
}

// The Messages API has no system role in `messages`: system turns are its `system` text. Roles
// alternate: an assistant's tool calls are tool_use blocks after its text, and the results that
// follow (role "tool" messages) are tool_result blocks of one user message.
function conversation(messages: readonly ChatMessage[]): { system?: string; messages: { role: string; content: unknown }[] } {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content);
  const turns: { role: string; content: unknown }[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    if (m.role === 'tool') {
      const result = { type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content };
      const last = turns.at(-1);
      if (last?.role === 'user' && Array.isArray(last.content) && last.content.every((b) => objectOf(b).type === 'tool_result'))
        last.content.push(result);
      else turns.push({ role: 'user', content: [result] });
    } else if (m.tool_calls && m.tool_calls.length > 0) {
      const calls = m.tool_calls.map((c) => ({
        type: 'tool_use',
        id: c.id,
        name: c.function.name,
        input: callInput(c.function.arguments),
      }));
      turns.push({ role: m.role, content: [...(m.content !== '' ? [{ type: 'text', text: m.content }] : []), ...calls] });
    } else turns.push({ role: m.role, content: m.content });
  }
  return { ...(system.length > 0 && { system: system.join('\n') }), messages: turns };
}

// A call's input is an object; arguments a model streamed that do not parse go back as the text
// they were (under `arguments`), so the conversation still says what the model sent.
function callInput(args: string): unknown {
  try {
    const v: unknown = JSON.parse(args === '' ? '{}' : args);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : { arguments: args };
  } catch {
    return { arguments: args };
  }
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
    // A call's argument fragment (non-empty), in either key order; its opening block is its head.
    toolCall: /^(?=.*"type":\s*"input_json_delta")(?=.*"partial_json":\s*"[^"])/,
    toolHead: /^(?=.*"type":\s*"content_block_start")(?=.*"type":\s*"tool_use")/,
  },
  metrics: descriptor.metrics,
  bodyTemplate: (input) => splitTemplate((text) => ({ ...fields(input), messages: [{ role: 'user', content: text }] }), input),
  bodyFromMessages: (input, messages) => JSON.stringify({ ...fields(input), ...conversation(messages) }),
  deltaText: (event) => {
    const e = objectOf(event);
    const index = typeof e.index === 'number' ? e.index : 0;
    if (e.type === 'content_block_start') {
      // A tool call opens with its id and name (the agentic loop sends them back).
      const block = objectOf(e.content_block);
      if (block.type !== 'tool_use') return { visible: '', reasoning: '' };
      const head = { ...(typeof block.id === 'string' && { id: block.id }), ...(typeof block.name === 'string' && { name: block.name }) };
      return { visible: '', reasoning: '', toolArguments: [{ index, arguments: '', ...head }] };
    }
    if (e.type !== 'content_block_delta') return { visible: '', reasoning: '' };
    const delta = objectOf(e.delta);
    if (delta.type === 'text_delta') return { visible: textOf(delta.text), reasoning: '' };
    if (delta.type === 'thinking_delta') return { visible: '', reasoning: textOf(delta.thinking) };
    if (delta.type === 'input_json_delta')
      return { visible: '', reasoning: '', toolArguments: [{ index, arguments: textOf(delta.partial_json) }] };
    return { visible: '', reasoning: '' };
  },
  usage,
};

// tool_choice as the Messages API spells it: "required" is its {type: "any"}.
const TOOL_CHOICE: Record<string, object> = { auto: { type: 'auto' }, required: { type: 'any' }, none: { type: 'none' } };

/** The Messages API with tools offered with every request and `images` image blocks after the text. */
export function anthropicWith(o: AdapterOptions): ApiAdapter {
  if (!o.tools && !o.images) return anthropicMessages;
  const tools = o.tools?.map((t) => {
    const { parameters, ...rest } = t as { name: string; description?: string; parameters?: object };
    return { ...rest, input_schema: parameters ?? { type: 'object', properties: {} } };
  });
  const extra = {
    ...(tools && { tools }),
    ...(tools && o.toolChoice !== undefined && { tool_choice: TOOL_CHOICE[o.toolChoice] }),
  };
  const images = Array.from({ length: o.images ?? 0 }, (_, k) => ({
    type: 'image',
    source: { type: 'base64', media_type: imageMediaMarker(k), data: imageDataMarker(k) },
  }));
  const content = (text: string) => (images.length > 0 ? [{ type: 'text', text }, ...images] : text);
  // A per-request body carries the images with its last user message, as a fixed-length body does.
  const withImages = (turns: { role: string; content: unknown }[]) => {
    const last = turns.map((t) => t.role).lastIndexOf('user');
    if (images.length === 0 || last < 0 || typeof turns[last]!.content !== 'string') return turns;
    return turns.map((t, i) => (i === last ? { ...t, content: content(t.content as string) } : t));
  };
  return {
    ...anthropicMessages,
    bodyTemplate: (input) =>
      splitTemplate((text) => ({ ...fields(input), messages: [{ role: 'user', content: content(text) }], ...extra }), input),
    bodyFromMessages: (input, messages) => {
      const c = conversation(messages);
      return JSON.stringify({ ...fields(input), ...c, messages: withImages(c.messages), ...extra });
    },
  };
}

/** The Anthropic Messages API in the registry. */
export const api: ApiModule = { descriptor, adapter: anthropicWith };
