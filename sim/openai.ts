// The OpenAI-compatible surface: request parsing/validation (with vLLM-like errors) and the JSON
// shapes of chunks and bodies. Pure functions; no I/O.
import { countTokens, tokenIds } from './tokenizer.js';

/** An error answered as an OpenAI-style `{"error":{...}}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The response body. */
  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

const invalid = (message: string, param: string | null = null, code: string | null = 'invalid_value'): ApiError =>
  new ApiError(400, message, 'invalid_request_error', code, param);

/** The generation endpoints: chat, completions and the Responses API (responses.ts). */
export type Endpoint = 'chat' | 'completions' | 'responses';

/** What the server serves, against which requests are checked. */
export interface ServedModel {
  model: string;
  maxModelLen: number;
  /** LoRA adapter names requests may name instead of the model. */
  loraModules?: readonly string[];
}

/** A validated generation request. */
export interface GenerationRequest {
  endpoint: Endpoint;
  /** Prompt text (chat: every message's content joined by newlines), for the EOS hash. */
  promptText: string;
  promptTokens: number;
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
  ignoreEos: boolean;
  /** The marker the prompt asks the answer to begin with (a load generator's canary), or null. */
  canaryMarker: string | null;
  /** Chat with tools (and tool_choice not "none"): the function the answer calls, instead of content. */
  toolName: string | null;
  /** Prompt tokens charged for images (included in promptTokens). */
  imageTokens: number;
}

// A load generator's canary instruction (loadfleet: "Begin your answer with <marker> and nothing before it.").
const CANARY_INSTRUCTION = /Begin your answer with (\S+?)[.,]?(?:\s|$)/;

/** The marker `text` asks the answer to begin with, or null. */
export function canaryMarkerIn(text: string): string | null {
  return CANARY_INSTRUCTION.exec(text)?.[1] ?? null;
}

/** Parses a request body; malformed JSON or a non-object is a 400. */
export function parseJsonObject(raw: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw invalid(`Invalid JSON body: ${(err as Error).message}`, null, 'invalid_json');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid('Request body must be a JSON object', null, 'invalid_json');
  return value as Record<string, unknown>;
}

/** Validates a chat or completions body against the served model. */
export function parseGenerationRequest(endpoint: Endpoint, body: Record<string, unknown>, served: ServedModel): GenerationRequest {
  checkModel(body['model'], served.model, served.loraModules);
  const texts = promptTexts(endpoint, body);
  const promptParam = PROMPT_PARAM[endpoint];
  const imageTokens = endpoint === 'chat' ? chatImageTokens(body['messages']) : 0;
  const promptTokens = texts.reduce((sum, text) => sum + countTokens(text), 0) + imageTokens;
  checkContextLength(promptTokens, served.maxModelLen, promptParam);
  const streamOptions = body['stream_options'] ?? {};
  if (typeof streamOptions !== 'object' || streamOptions === null) throw invalid('stream_options must be an object', 'stream_options');
  const requested =
    endpoint === 'responses'
      ? body['max_output_tokens']
      : (body['max_tokens'] ?? (endpoint === 'chat' ? body['max_completion_tokens'] : undefined));
  return {
    endpoint,
    promptText: texts.join('\n'),
    promptTokens,
    maxTokens: maxTokens(requested, promptTokens, served.maxModelLen, promptParam),
    stream: optionalBool(body['stream'], 'stream'),
    // The Responses API always reports usage (in response.completed).
    includeUsage:
      endpoint === 'responses' || optionalBool((streamOptions as Record<string, unknown>)['include_usage'], 'stream_options.include_usage'),
    ignoreEos: optionalBool(body['ignore_eos'], 'ignore_eos'),
    canaryMarker: canaryMarkerIn(texts.join('\n')),
    toolName: endpoint === 'chat' ? calledTool(body['tools'], body['tool_choice']) : null,
    imageTokens,
  };
}

/** Pixels per side of one image token: a vision encoder's 14-pixel patches merged 2×2, as Qwen2-VL's. */
export const IMAGE_TOKEN_PIXELS = 28;

// Image tokens of every image_url part (data: URIs of PNG or JPEG): ceil(w/28)·ceil(h/28) each,
// so prefill grows with image size as a vision encoder's does.
function chatImageTokens(messages: unknown): number {
  let tokens = 0;
  for (const [i, m] of (messages as { content?: unknown }[]).entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [j, part] of (m.content as Record<string, unknown>[]).entries()) {
      if (part?.['type'] !== 'image_url') continue;
      const url = (part['image_url'] as { url?: unknown } | undefined)?.url;
      const size = typeof url === 'string' ? imageSize(url) : null;
      if (!size) throw invalid('image_url.url must be a data: URI of a PNG or JPEG image', `messages[${i}].content[${j}].image_url.url`);
      tokens += Math.ceil(size.width / IMAGE_TOKEN_PIXELS) * Math.ceil(size.height / IMAGE_TOKEN_PIXELS);
    }
  }
  return tokens;
}

// Width and height from a data URI's PNG header (IHDR) or JPEG start-of-frame marker.
function imageSize(url: string): { width: number; height: number } | null {
  const m = /^data:image\/(?:png|jpeg|jpg);base64,/.exec(url);
  if (!m) return null;
  const bytes = Buffer.from(url.slice(m[0].length, m[0].length + 65536), 'base64');
  if (bytes.length >= 24 && bytes.toString('latin1', 1, 4) === 'PNG')
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  for (let i = 2; i + 9 < bytes.length && bytes[0] === 0xff && bytes[1] === 0xd8; ) {
    if (bytes[i] !== 0xff) return null;
    const marker = bytes[i + 1]!;
    if (marker >= 0xc0 && marker <= 0xc3) return { height: bytes.readUInt16BE(i + 5), width: bytes.readUInt16BE(i + 7) };
    i += 2 + bytes.readUInt16BE(i + 2);
  }
  return null;
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

const PROMPT_PARAM: Record<Endpoint, string> = { chat: 'messages', completions: 'prompt', responses: 'input' };

function promptTexts(endpoint: Endpoint, body: Record<string, unknown>): string[] {
  if (endpoint === 'chat') return messageContents(body['messages']);
  if (endpoint === 'completions') return [promptText(body['prompt'])];
  const instructions = body['instructions'];
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string')
    throw invalid('instructions must be a string', 'instructions');
  return [...(instructions ? [instructions] : []), ...responsesInput(body['input'])];
}

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

/** Validates a `/tokenize` body (`prompt` or `messages`) and returns its token ids. */
export function parseTokenizeRequest(body: Record<string, unknown>, served: ServedModel): number[] {
  checkModel(body['model'], served.model);
  const texts = body['messages'] !== undefined ? messageContents(body['messages']) : [promptText(body['prompt'])];
  return texts.flatMap(tokenIds);
}

function checkModel(model: unknown, served: string, loras: readonly string[] = []): void {
  if (model === undefined || model === null || model === served || loras.includes(model as string)) return;
  throw new ApiError(404, `The model \`${String(model)}\` does not exist.`, 'invalid_request_error', 'model_not_found', 'model');
}

function checkContextLength(promptTokens: number, maxModelLen: number, param: string): void {
  if (promptTokens <= maxModelLen) return;
  throw invalid(
    `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${promptTokens} input tokens. Please reduce the length of the input messages.`,
    param,
    'context_length_exceeded',
  );
}

function messageContents(messages: unknown): string[] {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages must be a non-empty array', 'messages');
  return messages.map((m: unknown, i) => {
    const msg = (typeof m === 'object' && m !== null ? m : {}) as Record<string, unknown>;
    if (typeof msg['role'] !== 'string') throw invalid(`messages[${i}].role must be a string`, `messages[${i}].role`);
    const content = msg['content'];
    // An assistant turn that called tools: its calls' arguments are prompt text too, as a chat
    // template renders them (an agentic session sends them back).
    if (typeof content === 'string') return [content, ...toolCallArguments(msg['tool_calls'])].filter((t) => t !== '').join('\n');
    // A list of parts: its text parts are the text (image parts are charged by chatImageTokens).
    if (!Array.isArray(content)) throw invalid(`messages[${i}].content must be a string or an array of parts`, `messages[${i}].content`);
    return content
      .filter((p: unknown) => (p as { type?: unknown } | null)?.type === 'text')
      .map((p: { text?: unknown }) => (typeof p.text === 'string' ? p.text : ''))
      .join('\n');
  });
}

function toolCallArguments(calls: unknown): string[] {
  if (!Array.isArray(calls)) return [];
  return calls
    .map((c: unknown) => (c as { function?: { arguments?: unknown } } | null)?.function?.arguments)
    .filter((a) => typeof a === 'string');
}

function promptText(prompt: unknown): string {
  if (typeof prompt !== 'string') throw invalid('prompt must be a string', 'prompt');
  return prompt;
}

// Like vLLM, an explicit max_tokens must fit in the context with the prompt; without one the
// default (16) shrinks to what is left, but never below one token.
function maxTokens(value: unknown, promptTokens: number, maxModelLen: number, promptParam: string): number {
  if (value === undefined || value === null) return Math.max(1, Math.min(16, maxModelLen - promptTokens));
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0)
    throw invalid(`max_tokens must be a positive integer, got ${JSON.stringify(value)}`, 'max_tokens');
  if (promptTokens + value > maxModelLen)
    throw invalid(
      `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${promptTokens + value} tokens (${promptTokens} in the ${promptParam}, ${value} in the completion). Please reduce the length of the ${promptParam} or completion.`,
      'max_tokens',
      'context_length_exceeded',
    );
  return value;
}

function optionalBool(value: unknown, param: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid(`${param} must be a boolean`, param);
  return value;
}

/** Fields every chunk and body of one response shares. */
export interface ResponseIdentity {
  endpoint: Endpoint;
  id: string;
  created: number;
  model: string;
}

/** Token counts reported in `usage`. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** With prefix caching: the prompt tokens served from the cache. */
  prompt_tokens_details?: { cached_tokens: number };
}

/** Usage for a prompt and completion length (and, with prefix caching, the cached prompt tokens). */
export function usageOf(promptTokens: number, completionTokens: number, cachedTokens?: number): Usage {
  const usage: Usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  if (cachedTokens !== undefined) usage.prompt_tokens_details = { cached_tokens: cachedTokens };
  return usage;
}

/** One streamed choice: a token, or the empty delta that carries the finish reason. */
export function choiceChunk(
  who: ResponseIdentity,
  text: string,
  options: { reasoning?: boolean; first?: boolean; finish?: string },
): object {
  const finish_reason = options.finish ?? null;
  if (who.endpoint === 'completions') return envelope(who, 'text_completion', [{ index: 0, text, logprobs: null, finish_reason }]);
  const delta: Record<string, string> = options.first ? { role: 'assistant' } : {};
  if (text !== '') delta[options.reasoning ? 'reasoning_content' : 'content'] = text;
  return envelope(who, 'chat.completion.chunk', [{ index: 0, delta, logprobs: null, finish_reason }]);
}

/** One streamed tool-call delta: the call's id and name on its first, then argument fragments. */
export function toolCallChunk(who: ResponseIdentity, call: { name?: string; arguments: string; first: boolean }): object {
  const fn = call.name === undefined ? { arguments: call.arguments } : { name: call.name, arguments: call.arguments };
  const tool = { index: 0, ...(call.name !== undefined && { id: `call_${who.id}`, type: 'function' }), function: fn };
  const delta = { ...(call.first ? { role: 'assistant' } : {}), tool_calls: [tool] };
  return envelope(who, 'chat.completion.chunk', [{ index: 0, delta, logprobs: null, finish_reason: null }]);
}

/** The stream's usage chunk: no choices, only usage. */
export function usageChunk(who: ResponseIdentity, usage: Usage): object {
  return { ...envelope(who, who.endpoint === 'chat' ? 'chat.completion.chunk' : 'text_completion', []), usage };
}

/** A whole non-streamed response; `usage` is left out when undefined. */
export function completionBody(
  who: ResponseIdentity,
  text: { content: string; reasoning: string },
  finish: string,
  usage: Usage | undefined,
): object {
  const choice =
    who.endpoint === 'completions'
      ? { index: 0, text: text.content, logprobs: null, finish_reason: finish }
      : {
          index: 0,
          message: { role: 'assistant', content: text.content, ...(text.reasoning ? { reasoning_content: text.reasoning } : {}) },
          logprobs: null,
          finish_reason: finish,
        };
  const body = envelope(who, who.endpoint === 'chat' ? 'chat.completion' : 'text_completion', [choice]);
  return usage ? { ...body, usage } : body;
}

function envelope(who: ResponseIdentity, object: string, choices: object[]): object {
  return { id: who.id, object, created: who.created, model: who.model, choices };
}

/** One server-sent event carrying `data`. */
export function sseEvent(data: object | string): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}
