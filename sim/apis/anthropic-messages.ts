// POST /v1/messages, the Anthropic Messages API: `messages` (content a string or text blocks),
// `system` (a string or text blocks), `max_tokens` (required), `stream`. Streamed as Anthropic
// does: message_start (usage: the input tokens), a ping, then per block content_block_start, its
// deltas (thinking_delta for the reasoning tokens, with a signature_delta before the block
// closes; text_delta for the answer) and content_block_stop, then message_delta (stop_reason and
// usage: the output tokens, and the input counts again as newer servers send them) and
// message_stop. Not streamed: one message body. Anthropic's input_tokens leave out the prompt
// tokens read from the cache (cache_read_input_tokens), so the prompt is their sum.
//
// Tools (`tools: [{name, input_schema}]`, tool_choice {type: auto|any|tool|none}): the answer
// calls one, as a tool_use block whose input streams as input_json_delta fragments, and stops with
// "tool_use". A conversation may carry tool_use and tool_result blocks (an agentic loop) and image
// blocks with a base64 source (charged as chat's images are: images.ts).
import type { FinishReason } from '../metrics.js';
import { invalid } from '../openai.js';
import type { GenerationRequest, ResponseIdentity, SimGenerationApi, SimStream, ToolCallPart, Usage } from './contract.js';
import { CONTENT_TOKEN, REASONING_TOKEN, sseEvent } from './contract.js';
import { imageTokens } from './images.js';

type Block = 'thinking' | 'text' | 'tool_use';

// The input side of usage as Anthropic counts it: uncached input, and the cache's reads.
function inputUsage(usage: Usage): Record<string, number> {
  const cached = usage.prompt_tokens_details?.cached_tokens;
  if (cached === undefined) return { input_tokens: usage.prompt_tokens };
  return { input_tokens: usage.prompt_tokens - cached, cache_read_input_tokens: cached, cache_creation_input_tokens: 0 };
}

// A called tool ends the answer whole (its input closes with the last token), as chat's
// finish_reason "tool_calls" does, whatever the length.
function stopReason(finish: FinishReason, called: boolean): string {
  return called ? 'tool_use' : finish === 'length' ? 'max_tokens' : 'end_turn';
}

function toolUseId(who: ResponseIdentity): string {
  return `toolu_${who.id}`;
}

// The signature a thinking block closes with (Anthropic's is an opaque proof; this one is only well formed).
function signatureOf(who: ResponseIdentity): string {
  return Buffer.from(`sig:${who.id}`).toString('base64');
}

/** Writes one message's event stream: start, then token by token, then finish. */
export class MessagesStream implements SimStream {
  private block: Block | null = null;
  private index = -1;
  private called = false;
  /** The block's repeated token delta, serialised once per block. */
  private repeated = '';

  constructor(
    private readonly who: ResponseIdentity,
    private readonly request: GenerationRequest,
    private readonly write: (chunk: string) => void,
  ) {}

  /** message_start, with the prompt's tokens, and a ping. */
  start(): void {
    const message = {
      id: this.who.id,
      type: 'message',
      role: 'assistant',
      model: this.who.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: this.request.promptTokens, output_tokens: 0 },
    };
    this.write(this.event({ type: 'message_start', message }) + this.event({ type: 'ping' }));
  }

  token(text: string, reasoning: boolean): void {
    const block: Block = reasoning ? 'thinking' : 'text';
    let out = block === this.block ? '' : this.open(block);
    const standard = reasoning ? REASONING_TOKEN : CONTENT_TOKEN;
    if (text === standard) {
      if (this.repeated === '') this.repeated = this.delta(text);
      out += this.repeated;
    } else out += this.delta(text);
    this.write(out);
  }

  /** A tool call: its block opens with the id and name, then its input streams as JSON fragments. */
  toolCall(part: ToolCallPart): void {
    let out = '';
    if (this.block !== 'tool_use') {
      out = this.open('tool_use', { id: toolUseId(this.who), name: part.name ?? this.request.toolName });
      this.called = true;
    }
    if (part.arguments !== '')
      out += this.event({
        type: 'content_block_delta',
        index: this.index,
        delta: { type: 'input_json_delta', partial_json: part.arguments },
      });
    this.write(out);
  }

  finish(finish: FinishReason, usage: Usage | undefined): void {
    let out = this.close();
    const delta = { stop_reason: stopReason(finish, this.called), stop_sequence: null };
    const counts = usage && { ...inputUsage(usage), output_tokens: usage.completion_tokens };
    out += this.event({ type: 'message_delta', delta, ...(counts && { usage: counts }) });
    out += this.event({ type: 'message_stop' });
    this.write(out);
  }

  // Closes the open block and opens the next.
  private open(block: Block, tool?: { id: string; name: string | null }): string {
    const out = this.close();
    this.block = block;
    this.index++;
    this.repeated = '';
    const contentBlock =
      block === 'thinking'
        ? { type: 'thinking', thinking: '', signature: '' }
        : block === 'tool_use'
          ? { type: 'tool_use', ...tool, input: {} }
          : { type: 'text', text: '' };
    return out + this.event({ type: 'content_block_start', index: this.index, content_block: contentBlock });
  }

  private close(): string {
    if (this.block === null) return '';
    const signature =
      this.block === 'thinking'
        ? this.event({
            type: 'content_block_delta',
            index: this.index,
            delta: { type: 'signature_delta', signature: signatureOf(this.who) },
          })
        : '';
    this.block = null;
    return signature + this.event({ type: 'content_block_stop', index: this.index });
  }

  private delta(text: string): string {
    const delta = this.block === 'thinking' ? { type: 'thinking_delta', thinking: text } : { type: 'text_delta', text };
    return this.event({ type: 'content_block_delta', index: this.index, delta });
  }

  private event(data: { type: string; [field: string]: unknown }): string {
    return sseEvent(data, data.type);
  }
}

// A `content` or `system` field: a string, or a list of blocks. Text blocks are the text; a
// tool_use block counts as its input's JSON and a tool_result as its content; image blocks are
// charged apart (messagesImageTokens).
function blocksText(value: unknown, param: string): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) throw invalid(`${param}: must be a string or a list of content blocks`, param);
  return value
    .map((block: unknown, j) => {
      const b = (typeof block === 'object' && block !== null ? block : {}) as Record<string, unknown>;
      if (b['type'] === 'text' && typeof b['text'] === 'string') return b['text'];
      if (b['type'] === 'image') return null;
      if (b['type'] === 'tool_use' && typeof b['name'] === 'string') return JSON.stringify(b['input'] ?? {});
      if (b['type'] === 'tool_result' && typeof b['tool_use_id'] === 'string')
        return b['content'] === undefined ? '' : blocksText(b['content'], `${param}.${j}.content`);
      throw invalid(`${param}.${j}: engine-sim reads text, image, tool_use and tool_result blocks`, `${param}.${j}`);
    })
    .filter((t) => t !== null)
    .join('\n');
}

function messagesTexts(body: Record<string, unknown>): string[] {
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages: must be a non-empty list', 'messages');
  const texts = messages.map((m: unknown, i) => {
    const msg = (typeof m === 'object' && m !== null ? m : {}) as Record<string, unknown>;
    if (msg['role'] !== 'user' && msg['role'] !== 'assistant')
      throw invalid(`messages.${i}.role: must be "user" or "assistant"`, `messages.${i}.role`);
    return blocksText(msg['content'], `messages.${i}.content`);
  });
  const system = body['system'];
  return system === undefined || system === null ? texts : [blocksText(system, 'system'), ...texts];
}

// Image tokens of every image block (a base64 PNG or JPEG source).
function messagesImageTokens(messages: unknown[]): number {
  let tokens = 0;
  for (const [i, m] of messages.entries()) {
    const content = (m as { content?: unknown }).content;
    if (!Array.isArray(content)) continue;
    for (const [j, block] of (content as Record<string, unknown>[]).entries()) {
      if (block?.['type'] !== 'image') continue;
      const source = (block['source'] ?? {}) as Record<string, unknown>;
      const ok =
        source['type'] === 'base64' && /^image\/(?:png|jpeg)$/.test(String(source['media_type'])) && typeof source['data'] === 'string';
      const charged = ok ? imageTokens(Buffer.from((source['data'] as string).slice(0, 65536), 'base64')) : null;
      if (charged === null)
        throw invalid(
          'source must be {type: "base64", media_type: "image/png" or "image/jpeg", data}',
          `messages.${i}.content.${j}.source`,
        );
      tokens += charged;
    }
  }
  return tokens;
}

// The tool an answer calls: the one tool_choice names, else the first (engine-sim always calls one
// when tools are offered and tool_choice is not {type: "none"}).
function calledTool(tools: unknown, choice: unknown): string | null {
  if (tools === undefined || tools === null) return null;
  if (!Array.isArray(tools) || tools.length === 0) throw invalid('tools: must be a non-empty list', 'tools');
  const names = tools.map((t: unknown, i) => {
    const name = (t as { name?: unknown } | null)?.name;
    if (typeof name !== 'string') throw invalid(`tools.${i}: must be {"name": …, "input_schema": {…}}`, `tools.${i}`);
    return name;
  });
  const c = (choice ?? {}) as { type?: unknown; name?: unknown };
  if (c.type === 'none') return null;
  if (c.type === 'tool') {
    if (typeof c.name !== 'string' || !names.includes(c.name))
      throw invalid(`tool_choice names ${String(c.name)}, which is not in tools`, 'tool_choice');
    return c.name;
  }
  return names[0]!;
}

/** The Anthropic Messages API. */
export const api: SimGenerationApi = {
  kind: 'generation',
  name: 'anthropic',
  paths: ['/v1/messages'],
  idPrefix: 'msg',
  reasoning: true,
  read: (body) => {
    if (body['max_tokens'] === undefined || body['max_tokens'] === null) throw invalid('max_tokens: Field required', 'max_tokens');
    return {
      texts: messagesTexts(body),
      imageTokens: messagesImageTokens(body['messages'] as unknown[]),
      promptParam: 'messages',
      maxTokens: body['max_tokens'],
      // Every message reports usage.
      includeUsage: true,
      toolName: calledTool(body['tools'], body['tool_choice']),
    };
  },
  stream: (who, request, write) => new MessagesStream(who, request, write),
  body: (who, request, text, end) => {
    // A called tool's input is the answer's text, as the streamed call's fragments spell it.
    const answer =
      request.toolName !== null
        ? { type: 'tool_use', id: toolUseId(who), name: request.toolName, input: { input: text.content } }
        : { type: 'text', text: text.content };
    const content = [
      ...(text.reasoning !== '' ? [{ type: 'thinking', thinking: text.reasoning, signature: signatureOf(who) }] : []),
      answer,
    ];
    return {
      id: who.id,
      type: 'message',
      role: 'assistant',
      model: who.model,
      content,
      stop_reason: stopReason(end.finish, request.toolName !== null),
      stop_sequence: null,
      ...(end.usage && { usage: { ...inputUsage(end.usage), output_tokens: end.usage.completion_tokens } }),
    };
  },
};
