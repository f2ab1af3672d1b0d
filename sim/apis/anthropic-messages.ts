// POST /v1/messages, the Anthropic Messages API: `messages` (content a string or text blocks),
// `system` (a string or text blocks), `max_tokens` (required), `stream`. Streamed as Anthropic
// does: message_start (usage: the input tokens), a ping, then per block content_block_start, its
// deltas (thinking_delta for the reasoning tokens, with a signature_delta before the block
// closes; text_delta for the answer) and content_block_stop, then message_delta (stop_reason and
// usage: the output tokens, and the input counts again as newer servers send them) and
// message_stop. Not streamed: one message body. Anthropic's input_tokens leave out the prompt
// tokens read from the cache (cache_read_input_tokens), so the prompt is their sum.
import type { FinishReason } from '../metrics.js';
import { invalid } from '../openai.js';
import type { GenerationRequest, ResponseIdentity, SimGenerationApi, SimStream, Usage } from './contract.js';
import { CONTENT_TOKEN, REASONING_TOKEN, sseEvent } from './contract.js';

type Block = 'thinking' | 'text';

// The input side of usage as Anthropic counts it: uncached input, and the cache's reads.
function inputUsage(usage: Usage): Record<string, number> {
  const cached = usage.prompt_tokens_details?.cached_tokens;
  if (cached === undefined) return { input_tokens: usage.prompt_tokens };
  return { input_tokens: usage.prompt_tokens - cached, cache_read_input_tokens: cached, cache_creation_input_tokens: 0 };
}

function stopReason(finish: FinishReason): string {
  return finish === 'length' ? 'max_tokens' : 'end_turn';
}

// The signature a thinking block closes with (Anthropic's is an opaque proof; this one is only well formed).
function signatureOf(who: ResponseIdentity): string {
  return Buffer.from(`sig:${who.id}`).toString('base64');
}

/** Writes one message's event stream: start, then token by token, then finish. */
export class MessagesStream implements SimStream {
  private block: Block | null = null;
  private index = -1;
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

  finish(finish: FinishReason, usage: Usage | undefined): void {
    let out = this.close();
    const delta = { stop_reason: stopReason(finish), stop_sequence: null };
    const counts = usage && { ...inputUsage(usage), output_tokens: usage.completion_tokens };
    out += this.event({ type: 'message_delta', delta, ...(counts && { usage: counts }) });
    out += this.event({ type: 'message_stop' });
    this.write(out);
  }

  // Closes the open block and opens the next.
  private open(block: Block): string {
    const out = this.close();
    this.block = block;
    this.index++;
    this.repeated = '';
    const contentBlock = block === 'thinking' ? { type: 'thinking', thinking: '', signature: '' } : { type: 'text', text: '' };
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

// A `content` or `system` field: a string, or a list of blocks whose text blocks are the text.
function blocksText(value: unknown, param: string): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) throw invalid(`${param}: must be a string or a list of content blocks`, param);
  return value
    .map((block: unknown, j) => {
      const b = (typeof block === 'object' && block !== null ? block : {}) as Record<string, unknown>;
      if (b['type'] !== 'text' || typeof b['text'] !== 'string')
        throw invalid(`${param}.${j}: engine-sim reads text blocks only`, `${param}.${j}`);
      return b['text'];
    })
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
      imageTokens: 0,
      promptParam: 'messages',
      maxTokens: body['max_tokens'],
      // Every message reports usage.
      includeUsage: true,
      toolName: null,
    };
  },
  stream: (who, request, write) => new MessagesStream(who, request, write),
  body: (who, _request, text, end) => {
    const content = [
      ...(text.reasoning !== '' ? [{ type: 'thinking', thinking: text.reasoning, signature: signatureOf(who) }] : []),
      { type: 'text', text: text.content },
    ];
    return {
      id: who.id,
      type: 'message',
      role: 'assistant',
      model: who.model,
      content,
      stop_reason: stopReason(end.finish),
      stop_sequence: null,
      ...(end.usage && { usage: { ...inputUsage(end.usage), output_tokens: end.usage.completion_tokens } }),
    };
  },
};
