// POST {base}/chat/completions with one user message (or a conversation); text arrives in
// delta.content and, on reasoning models, delta.reasoning_content (or delta.reasoning on some
// servers); the stream ends with `data: [DONE]` and usage comes in its own chunk before it.
import type { AdapterOptions, ApiAdapter, ApiDescriptor, ApiModule, BodyFields, ChatMessage } from './contract.js';
import { bearerAuth, firstChoice, imageMarker, objectOf, STREAMED, splitTemplate, textOf } from './contract.js';
import { openaiFields, openaiUsage } from './openai-fields.js';

const descriptor: ApiDescriptor = {
  name: 'chat',
  order: 0,
  summary: '`chat` (/chat/completions)',
  path: '/chat/completions',
  metrics: STREAMED,
  chatTemplated: true,
  batched: false,
  perRequest: true,
  sessions: true,
  tools: true,
  images: true,
  doctorProbe: true,
  authHeaders: bearerAuth,
};

/** The chat completions API. */
export const openaiChat: ApiAdapter = {
  descriptor,
  path: descriptor.path,
  patterns: {
    content: /"content":\s*"[^"]/,
    reasoning: /"(?:reasoning_content|reasoning)":\s*"[^"]/,
    toolCall: /"tool_calls":\s*\[\s*\{/,
    terminator: '[DONE]',
    usage: /"usage":\s*\{/,
  },
  metrics: descriptor.metrics,
  bodyTemplate: (input) => splitTemplate((text) => ({ ...openaiFields(input), messages: [{ role: 'user', content: text }] }), input),
  bodyFromMessages: (input, messages) => JSON.stringify({ ...openaiFields(input), messages }),
  deltaText: (event) => {
    const delta = (firstChoice(event).delta ?? {}) as Record<string, unknown>;
    // Some servers send the same text under both names: counted once, or tokenizer-counted output doubles.
    const rc = textOf(delta.reasoning_content);
    const r = textOf(delta.reasoning);
    const text = { visible: textOf(delta.content), reasoning: rc === r ? rc : rc + r };
    if (!Array.isArray(delta.tool_calls)) return text;
    const toolArguments = delta.tool_calls.map((c: unknown, i) => {
      const call = objectOf(c);
      const fn = objectOf(call.function);
      // The call's id and name come on its first delta (an agentic session sends them back).
      const head = { ...(typeof call.id === 'string' && { id: call.id }), ...(typeof fn.name === 'string' && { name: fn.name }) };
      return { index: typeof call.index === 'number' ? call.index : i, arguments: textOf(fn.arguments), ...head };
    });
    return { ...text, toolArguments };
  },
  usage: openaiUsage,
};

/**
 * Chat with more than text: `tools` (and tool_choice) offered with every request, and `images`
 * image_url parts after the text, each a marker the caller replaces with the request's data URI.
 */
export function openaiChatWith(extra: { tools?: readonly object[]; toolChoice?: string; images?: number }): ApiAdapter {
  const fields = {
    ...(extra.tools && { tools: extra.tools }),
    ...(extra.tools && extra.toolChoice !== undefined && { tool_choice: extra.toolChoice }),
  };
  const images = Array.from({ length: extra.images ?? 0 }, (_, k) => ({ type: 'image_url', image_url: { url: imageMarker(k) } }));
  const content = (text: string) => (images.length > 0 ? [{ type: 'text', text }, ...images] : text);
  // A per-request body (a dataset record, a trace's text) carries the images with its last user
  // message, as a fixed-length body does with its one message. (Sessions refuse images.)
  const withImages = (messages: readonly ChatMessage[]) => {
    const last = messages.map((m) => m.role).lastIndexOf('user');
    return images.length === 0 || last < 0 ? messages : messages.map((m, i) => (i === last ? { ...m, content: content(m.content) } : m));
  };
  return {
    ...openaiChat,
    bodyTemplate: (input) =>
      splitTemplate((text) => ({ ...openaiFields(input), messages: [{ role: 'user', content: content(text) }], ...fields }), input),
    bodyFromMessages: (input: BodyFields, messages) =>
      JSON.stringify({ ...openaiFields(input), messages: withImages(messages), ...fields }),
  };
}

// Tools are offered as OpenAI function tools: a plan's { name, description?, parameters? } each.
function chatAdapter(o: AdapterOptions): ApiAdapter {
  if (!o.tools && !o.images) return openaiChat;
  const tools = o.tools?.map((t) => ({ type: 'function', function: { parameters: { type: 'object', properties: {} }, ...t } }));
  return openaiChatWith({
    ...(tools && { tools }),
    ...(o.toolChoice !== undefined && { toolChoice: o.toolChoice }),
    ...(o.images !== undefined && { images: o.images }),
  });
}

/** The chat completions API in the registry. */
export const api: ApiModule = { descriptor, adapter: chatAdapter };
