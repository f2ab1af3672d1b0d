// The Responses API's wire shapes (POST /v1/responses): a stream of typed events — response.created
// and response.in_progress at once, then per output item its added/delta/done events (a reasoning
// item whose summary streams as response.reasoning_summary_text.delta, then the message whose
// text streams as response.output_text.delta), and last response.completed, or response.incomplete
// when max_output_tokens cut it short, carrying usage (input_tokens, output_tokens). Each event is
// written as `event: <type>` + `data: <json>`, as OpenAI does. Its body: `input` (a string or a
// conversation), `instructions`, max_output_tokens; usage is always reported. Pure string building.
import type { FinishReason } from '../metrics.js';
import { invalid } from '../openai.js';
import type { ResponseIdentity, SimGenerationApi, SimStream, Usage } from './contract.js';

/** The Responses API's usage object. */
interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details?: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

function responsesUsage(usage: Usage, reasoningTokens: number): ResponsesUsage {
  return {
    input_tokens: usage.prompt_tokens,
    ...(usage.prompt_tokens_details && { input_tokens_details: usage.prompt_tokens_details }),
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: usage.total_tokens,
  };
}

/** The text a response holds so far. */
export interface ResponseText {
  content: string;
  reasoning: string;
}

/** The response object (in created/in_progress events, the final event and the non-streamed body). */
export function responseObject(
  who: ResponseIdentity,
  text: ResponseText,
  state: { finish: FinishReason | null; usage: Usage | undefined; reasoningTokens: number },
): object {
  const status = state.finish === null ? 'in_progress' : state.finish === 'length' ? 'incomplete' : 'completed';
  const output: object[] = [];
  if (text.reasoning !== '')
    output.push({ id: `rs_${who.id}`, type: 'reasoning', summary: [{ type: 'summary_text', text: text.reasoning }] });
  if (state.finish !== null || text.content !== '')
    output.push({
      id: `msg_${who.id}`,
      type: 'message',
      status: state.finish === null ? 'in_progress' : status,
      role: 'assistant',
      content: [{ type: 'output_text', text: text.content, annotations: [] }],
    });
  return {
    id: who.id,
    object: 'response',
    created_at: who.created,
    status,
    model: who.model,
    output: state.finish === null ? [] : output,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    usage: state.finish !== null && state.usage ? responsesUsage(state.usage, state.reasoningTokens) : null,
  };
}

/** Writes one response's event stream; call start, then token per token, then finish. */
export class ResponsesStream implements SimStream {
  private seq = 0;
  private readonly text: ResponseText = { content: '', reasoning: '' };
  private reasoningOpen = false;
  private reasoningClosed = false;
  private messageOpen = false;
  private reasoningTokens = 0;
  private readonly reasoningId: string;
  private readonly messageId: string;

  constructor(
    private readonly who: ResponseIdentity,
    private readonly write: (chunk: string) => void,
  ) {
    this.reasoningId = `rs_${who.id}`;
    this.messageId = `msg_${who.id}`;
  }

  /** response.created and response.in_progress, sent with the headers. */
  start(): void {
    const response = responseObject(this.who, this.text, { finish: null, usage: undefined, reasoningTokens: 0 });
    this.write(this.event('response.created', { response }) + this.event('response.in_progress', { response }));
  }

  /** One generated token: a reasoning summary delta or an output text delta (opening its item first). */
  token(text: string, reasoning: boolean): void {
    let out = '';
    if (reasoning) {
      if (!this.reasoningOpen) {
        this.reasoningOpen = true;
        out += this.event('response.output_item.added', {
          output_index: 0,
          item: { id: this.reasoningId, type: 'reasoning', summary: [] },
        });
        out += this.event('response.reasoning_summary_part.added', {
          item_id: this.reasoningId,
          output_index: 0,
          summary_index: 0,
          part: { type: 'summary_text', text: '' },
        });
      }
      this.reasoningTokens++;
      this.text.reasoning += text;
      out += this.event('response.reasoning_summary_text.delta', {
        item_id: this.reasoningId,
        output_index: 0,
        summary_index: 0,
        delta: text,
      });
    } else {
      if (!this.messageOpen) out += this.openMessage();
      this.text.content += text;
      out += this.event('response.output_text.delta', {
        item_id: this.messageId,
        output_index: this.messageIndex(),
        content_index: 0,
        delta: text,
        logprobs: [],
      });
    }
    this.write(out);
  }

  /** Closes the open items and ends with response.completed (or response.incomplete at max_output_tokens). */
  finish(finish: FinishReason, usage: Usage | undefined): void {
    let out = this.closeReasoning();
    if (!this.messageOpen) out += this.openMessage();
    const index = this.messageIndex();
    out += this.event('response.output_text.done', {
      item_id: this.messageId,
      output_index: index,
      content_index: 0,
      text: this.text.content,
    });
    out += this.event('response.content_part.done', {
      item_id: this.messageId,
      output_index: index,
      content_index: 0,
      part: { type: 'output_text', text: this.text.content, annotations: [] },
    });
    const response = responseObject(this.who, this.text, { finish, usage, reasoningTokens: this.reasoningTokens });
    const message = (response as { output: object[] }).output.at(-1);
    out += this.event('response.output_item.done', { output_index: index, item: message });
    out += this.event(finish === 'length' ? 'response.incomplete' : 'response.completed', { response });
    this.write(out);
  }

  private openMessage(): string {
    const out = this.closeReasoning();
    this.messageOpen = true;
    const index = this.messageIndex();
    return (
      out +
      this.event('response.output_item.added', {
        output_index: index,
        item: { id: this.messageId, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      }) +
      this.event('response.content_part.added', {
        item_id: this.messageId,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      })
    );
  }

  // The reasoning item is done when the message starts (or the response ends).
  private closeReasoning(): string {
    if (!this.reasoningOpen || this.reasoningClosed) return '';
    this.reasoningClosed = true;
    const item = { id: this.reasoningId, type: 'reasoning', summary: [{ type: 'summary_text', text: this.text.reasoning }] };
    return (
      this.event('response.reasoning_summary_text.done', {
        item_id: this.reasoningId,
        output_index: 0,
        summary_index: 0,
        text: this.text.reasoning,
      }) +
      this.event('response.reasoning_summary_part.done', {
        item_id: this.reasoningId,
        output_index: 0,
        summary_index: 0,
        part: { type: 'summary_text', text: this.text.reasoning },
      }) +
      this.event('response.output_item.done', { output_index: 0, item })
    );
  }

  private messageIndex(): number {
    return this.reasoningTokens > 0 ? 1 : 0;
  }

  private event(type: string, fields: object): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.seq++, ...fields })}\n\n`;
  }
}

/** The Responses API. */
export const api: SimGenerationApi = {
  kind: 'generation',
  name: 'responses',
  paths: ['/v1/responses'],
  idPrefix: 'resp',
  reasoning: true,
  read: (body) => {
    const instructions = body['instructions'];
    if (instructions !== undefined && instructions !== null && typeof instructions !== 'string')
      throw invalid('instructions must be a string', 'instructions');
    return {
      texts: [...(instructions ? [instructions] : []), ...responsesInput(body['input'])],
      imageTokens: 0,
      promptParam: 'input',
      maxTokens: body['max_output_tokens'],
      // The Responses API always reports usage (in response.completed).
      includeUsage: true,
      toolName: null,
    };
  },
  stream: (who, _request, write) => new ResponsesStream(who, write),
  body: (who, _request, text, end) =>
    responseObject(who, text, { finish: end.finish, usage: end.usage, reasoningTokens: end.reasoningTokens }),
};

// The Responses API's `input`: a string, or a list of messages whose content is a string or a
// list of input_text parts.
function responsesInput(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) throw invalid('input must be a string or a non-empty array of messages', 'input');
  return input.map((m: unknown, i) => {
    const msg = (typeof m === 'object' && m !== null ? m : {}) as Record<string, unknown>;
    if (typeof msg['role'] !== 'string') throw invalid(`input[${i}].role must be a string`, `input[${i}].role`);
    const content = msg['content'];
    if (typeof content === 'string') return content;
    if (!Array.isArray(content)) throw invalid(`input[${i}].content must be a string or an array of parts`, `input[${i}].content`);
    return content
      .map((part: unknown, j) => {
        const p = (typeof part === 'object' && part !== null ? part : {}) as Record<string, unknown>;
        if (typeof p['text'] !== 'string')
          throw invalid(`input[${i}].content[${j}].text must be a string`, `input[${i}].content[${j}].text`);
        return p['text'];
      })
      .join('\n');
  });
}
