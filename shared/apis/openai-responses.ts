// POST {base}/responses (OpenAI's Responses API) with `input` as a string or a conversation.
// Its stream is typed events: text arrives in response.output_text.delta, reasoning in
// response.reasoning_summary_text.delta (OpenAI) or response.reasoning_text.delta (vLLM's raw
// reasoning); the stream ends with response.completed — or response.incomplete when
// max_output_tokens cut it short, the normal end of a fixed-length request — whose response
// carries usage as input_tokens/output_tokens.
import type { ApiAdapter, ApiDescriptor, ApiModule, BodyFields } from './contract.js';
import { bearerAuth, numberOrNull, objectOf, STREAMED, splitTemplate, textOf } from './contract.js';

const OUTPUT_TEXT = 'response.output_text.delta';
const REASONING_TEXT = /^response\.reasoning(?:_summary)?_text\.delta$/;

const descriptor: ApiDescriptor = {
  name: 'responses',
  order: 2,
  summary: '`responses` (/responses, the Responses API)',
  path: '/responses',
  metrics: STREAMED,
  // Its `input` is a conversation, rendered through the chat template.
  chatTemplated: true,
  batched: false,
  perRequest: true,
  sessions: true,
  tools: false,
  images: false,
  doctorProbe: false,
  authHeaders: bearerAuth,
};

// Fields beside the input: streamed, max_output_tokens, and exactly that many with ignore_eos
// (a vLLM sampling extension, as for chat).
function fields(input: BodyFields): Record<string, unknown> {
  return { model: input.model, max_output_tokens: input.maxTokens, stream: true, ...(input.ignoreEos ? { ignore_eos: true } : {}) };
}

/** The Responses API. */
export const openaiResponses: ApiAdapter = {
  descriptor,
  path: descriptor.path,
  patterns: {
    // The event's type and a non-empty delta, in either order (servers differ in key order).
    content: /^(?=.*"type":\s*"response\.output_text\.delta")(?=.*"delta":\s*"[^"])/,
    reasoning: /^(?=.*"type":\s*"response\.reasoning(?:_summary)?_text\.delta")(?=.*"delta":\s*"[^"])/,
    doneEvent: /"type":\s*"response\.(?:completed|incomplete)"/,
    // Some servers still send [DONE] after response.completed.
    terminator: '[DONE]',
    usage: /"usage":\s*\{/,
    error: /"type":\s*"(?:error|response\.failed)"/,
  },
  metrics: descriptor.metrics,
  bodyTemplate: (input) => splitTemplate((text) => ({ ...fields(input), input: text }), input),
  bodyFromMessages: (input, messages) => JSON.stringify({ ...fields(input), input: messages }),
  deltaText: (event) => {
    const e = objectOf(event);
    const type = textOf(e.type);
    if (type === OUTPUT_TEXT) return { visible: textOf(e.delta), reasoning: '' };
    if (REASONING_TEXT.test(type)) return { visible: '', reasoning: textOf(e.delta) };
    return { visible: '', reasoning: '' };
  },
  usage: (event) => {
    const usage = objectOf(objectOf(objectOf(event).response).usage);
    return {
      prompt_tokens: numberOrNull(usage.input_tokens),
      completion_tokens: numberOrNull(usage.output_tokens),
      cached_tokens: numberOrNull(objectOf(usage.input_tokens_details).cached_tokens),
    };
  },
};

/** The Responses API in the registry. */
export const api: ApiModule = { descriptor, adapter: () => openaiResponses };
