// POST /v1/chat/completions: `messages` (text, or parts with image_url data URIs charged as a
// vision encoder would), max_tokens (or max_completion_tokens), stream_options.include_usage,
// tools and tool_choice; answered as chat.completion chunks (reasoning_content, then content or a
// tool call) ending in `data: [DONE]`, or one chat.completion body.
import { invalid, messageContents, optionalBool } from '../openai.js';
import type { SimGenerationApi } from './contract.js';
import { imageTokens } from './images.js';
import { completionBody, OpenAiChunkStream } from './openai-wire.js';

/** The chat completions API. */
export const api: SimGenerationApi = {
  kind: 'generation',
  name: 'chat',
  paths: ['/v1/chat/completions'],
  idPrefix: 'chatcmpl',
  reasoning: true,
  read: (body) => {
    const streamOptions = body['stream_options'] ?? {};
    if (typeof streamOptions !== 'object' || streamOptions === null) throw invalid('stream_options must be an object', 'stream_options');
    return {
      texts: messageContents(body['messages']),
      imageTokens: chatImageTokens(body['messages']),
      promptParam: 'messages',
      maxTokens: body['max_tokens'] ?? body['max_completion_tokens'],
      includeUsage: optionalBool((streamOptions as Record<string, unknown>)['include_usage'], 'stream_options.include_usage'),
      toolName: calledTool(body['tools'], body['tool_choice']),
    };
  },
  stream: (who, request, write) => new OpenAiChunkStream('chat', who, request.includeUsage, request.toolName !== null, write),
  body: (who, _request, text, end) => completionBody('chat', who, text, end.finish, end.usage),
};

// Image tokens of every image_url part (data: URIs of PNG or JPEG), as a vision encoder charges them (images.ts).
function chatImageTokens(messages: unknown): number {
  let tokens = 0;
  for (const [i, m] of (messages as { content?: unknown }[]).entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [j, part] of (m.content as Record<string, unknown>[]).entries()) {
      if (part?.['type'] !== 'image_url') continue;
      const url = (part['image_url'] as { url?: unknown } | undefined)?.url;
      const head = typeof url === 'string' ? /^data:image\/(?:png|jpeg|jpg);base64,/.exec(url) : null;
      const charged = head ? imageTokens(Buffer.from((url as string).slice(head[0].length, head[0].length + 65536), 'base64')) : null;
      if (charged === null)
        throw invalid('image_url.url must be a data: URI of a PNG or JPEG image', `messages[${i}].content[${j}].image_url.url`);
      tokens += charged;
    }
  }
  return tokens;
}

// The function a chat answer calls: the one tool_choice names, else the first tool (engine-sim
// always calls one when tools are offered and tool_choice is not "none").
function calledTool(tools: unknown, choice: unknown): string | null {
  if (tools === undefined || tools === null) return null;
  if (!Array.isArray(tools) || tools.length === 0) throw invalid('tools must be a non-empty array', 'tools');
  const names = tools.map((t: unknown, i) => {
    const fn = (t as { type?: unknown; function?: { name?: unknown } } | null)?.function;
    if ((t as { type?: unknown } | null)?.type !== 'function' || typeof fn?.name !== 'string')
      throw invalid(`tools[${i}] must be {"type": "function", "function": {"name": …}}`, `tools[${i}]`);
    return fn.name;
  });
  if (choice === 'none') return null;
  const named = (choice as { function?: { name?: unknown } } | null)?.function?.name;
  if (typeof named === 'string') {
    if (!names.includes(named)) throw invalid(`tool_choice names ${named}, which is not in tools`, 'tool_choice');
    return named;
  }
  return names[0]!;
}
