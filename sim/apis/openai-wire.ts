// The chunk and body shapes chat and completions share (OpenAI's): an envelope of id, object,
// created, model and choices; the usage chunk; `data: [DONE]` at the end. Not an API of its own:
// the registry skips it (it exports no `api`).
import type { FinishReason } from '../metrics.js';
import type { ResponseIdentity, SimStream, ToolCallPart, Usage } from './contract.js';
import { CONTENT_TOKEN, REASONING_TOKEN, sseEvent } from './contract.js';

/** Which of the two APIs a chunk belongs to. */
export type OpenAiFlavour = 'chat' | 'completions';

/** One streamed choice: a token, or the empty delta that carries the finish reason. */
export function choiceChunk(
  flavour: OpenAiFlavour,
  who: ResponseIdentity,
  text: string,
  options: { reasoning?: boolean; first?: boolean; finish?: string },
): object {
  const finish_reason = options.finish ?? null;
  if (flavour === 'completions') return envelope(who, 'text_completion', [{ index: 0, text, logprobs: null, finish_reason }]);
  const delta: Record<string, string> = options.first ? { role: 'assistant' } : {};
  if (text !== '') delta[options.reasoning ? 'reasoning_content' : 'content'] = text;
  return envelope(who, 'chat.completion.chunk', [{ index: 0, delta, logprobs: null, finish_reason }]);
}

/** One streamed tool-call delta: the call's id and name on its first, then argument fragments. */
export function toolCallChunk(who: ResponseIdentity, call: ToolCallPart): object {
  const fn = call.name === undefined ? { arguments: call.arguments } : { name: call.name, arguments: call.arguments };
  const tool = { index: 0, ...(call.name !== undefined && { id: `call_${who.id}`, type: 'function' }), function: fn };
  const delta = { ...(call.first ? { role: 'assistant' } : {}), tool_calls: [tool] };
  return envelope(who, 'chat.completion.chunk', [{ index: 0, delta, logprobs: null, finish_reason: null }]);
}

/** The stream's usage chunk: no choices, only usage. */
export function usageChunk(flavour: OpenAiFlavour, who: ResponseIdentity, usage: Usage): object {
  return { ...envelope(who, flavour === 'chat' ? 'chat.completion.chunk' : 'text_completion', []), usage };
}

/** A whole non-streamed response; `usage` is left out when undefined. */
export function completionBody(
  flavour: OpenAiFlavour,
  who: ResponseIdentity,
  text: { content: string; reasoning: string },
  finish: string,
  usage: Usage | undefined,
): object {
  const choice =
    flavour === 'completions'
      ? { index: 0, text: text.content, logprobs: null, finish_reason: finish }
      : {
          index: 0,
          message: { role: 'assistant', content: text.content, ...(text.reasoning ? { reasoning_content: text.reasoning } : {}) },
          logprobs: null,
          finish_reason: finish,
        };
  const body = envelope(who, flavour === 'chat' ? 'chat.completion' : 'text_completion', [choice]);
  return usage ? { ...body, usage } : body;
}

function envelope(who: ResponseIdentity, object: string, choices: object[]): object {
  return { id: who.id, object, created: who.created, model: who.model, choices };
}

/**
 * The chunk stream of chat or completions: a chunk per token (the first carries the assistant
 * role), a finish chunk, the usage chunk when asked, then `data: [DONE]`. Every token chunk after
 * the first is identical, so each kind is serialised once per answer.
 */
export class OpenAiChunkStream implements SimStream {
  private started = false;
  private readonly repeated: { content: string; reasoning: string };

  constructor(
    private readonly flavour: OpenAiFlavour,
    private readonly who: ResponseIdentity,
    private readonly includeUsage: boolean,
    private readonly calls: boolean,
    private readonly write: (chunk: string) => void,
  ) {
    this.repeated = {
      content: sseEvent(choiceChunk(flavour, who, CONTENT_TOKEN, { reasoning: false })),
      reasoning: sseEvent(choiceChunk(flavour, who, REASONING_TOKEN, { reasoning: true })),
    };
  }

  start(): void {}

  token(text: string, reasoning: boolean): void {
    const first = !this.started;
    this.started = true;
    if (!first && text === (reasoning ? REASONING_TOKEN : CONTENT_TOKEN)) this.write(this.repeated[reasoning ? 'reasoning' : 'content']);
    else this.write(sseEvent(choiceChunk(this.flavour, this.who, text, { reasoning, first })));
  }

  toolCall(part: ToolCallPart): void {
    this.started = true;
    this.write(sseEvent(toolCallChunk(this.who, part)));
  }

  finish(finish: FinishReason, usage: Usage | undefined): void {
    this.write(sseEvent(choiceChunk(this.flavour, this.who, '', { finish: this.calls ? 'tool_calls' : finish })));
    if (this.includeUsage && usage) this.write(sseEvent(usageChunk(this.flavour, this.who, usage)));
    this.write('data: [DONE]\n\n');
  }
}
