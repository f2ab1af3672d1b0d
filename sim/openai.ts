// What every API's request shares: OpenAI-style (vLLM-like) errors, the model, context and
// max-tokens checks, the canary marker, the tokenize endpoint. Each API's own fields and answers
// are its module in apis/. Pure functions; no I/O.
import type { GenerationRequest, SimGenerationApi } from './apis/contract.js';
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

/** A 400 for a bad field. */
export const invalid = (message: string, param: string | null = null, code: string | null = 'invalid_value'): ApiError =>
  new ApiError(400, message, 'invalid_request_error', code, param);

/** What the server serves, against which requests are checked. */
export interface ServedModel {
  model: string;
  maxModelLen: number;
  /** LoRA adapter names requests may name instead of the model. */
  loraModules?: readonly string[];
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

/** Validates a generation body of `api` against the served model. */
export function parseGenerationRequest(api: SimGenerationApi, body: Record<string, unknown>, served: ServedModel): GenerationRequest {
  checkModel(body['model'], served.model, served.loraModules);
  const parts = api.read(body);
  const promptTokens = parts.texts.reduce((sum, text) => sum + countTokens(text), 0) + parts.imageTokens;
  checkContextLength(promptTokens, served.maxModelLen, parts.promptParam);
  const promptText = parts.texts.join('\n');
  return {
    api,
    promptText,
    promptTokens,
    maxTokens: maxTokens(parts.maxTokens, promptTokens, served.maxModelLen, parts.promptParam),
    stream: optionalBool(body['stream'], 'stream'),
    includeUsage: parts.includeUsage,
    ignoreEos: optionalBool(body['ignore_eos'], 'ignore_eos'),
    canaryMarker: canaryMarkerIn(promptText),
    toolName: parts.toolName,
    imageTokens: parts.imageTokens,
  };
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

/** The texts of a chat `messages` list (a tool-calling turn's arguments included, as a template renders them). */
export function messageContents(messages: unknown): string[] {
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

/** A `prompt` that must be a string. */
export function promptText(prompt: unknown): string {
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

/** A boolean field that may be absent (false). */
export function optionalBool(value: unknown, param: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid(`${param} must be a boolean`, param);
  return value;
}
