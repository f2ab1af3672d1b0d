// What engine-sim serves of one API, as each module in this folder states it: its paths, how its
// request body is read (the prompt texts, the requested length, what it asks for), and how its
// answer is written (a stream of events token by token, or one body). The engine, the faults and
// the timing are the same for every API (generate.ts); only the wire differs. engine-sim stands
// alone: this is its own small copy of what loadfleet's API modules describe from the client side.
import type { FinishReason } from '../metrics.js';

/** Text of every generated content token (one word, so it counts as one token). */
export const CONTENT_TOKEN = 'tok ';
/** Text of every generated reasoning token. */
export const REASONING_TOKEN = 'think ';

/** Token counts reported in an answer's usage (each API names them its own way). */
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

/** Fields every event and body of one response shares. */
export interface ResponseIdentity {
  id: string;
  created: number;
  model: string;
}

/** What an API's body asks for, read by its module (the common checks are openai.ts parseGenerationRequest's). */
export interface RequestParts {
  /** The prompt's texts (a conversation's messages), each counted and all joined for the EOS hash. */
  texts: string[];
  /** Prompt tokens charged for images (chat). */
  imageTokens: number;
  /** The body field the prompt is in, for errors (`messages`, `prompt`, `input`). */
  promptParam: string;
  /** The requested output length (max_tokens or the API's name for it), unchecked. */
  maxTokens: unknown;
  /** Usage is sent in the stream. */
  includeUsage: boolean;
  /** The function the answer calls instead of content (chat with tools), or null. */
  toolName: string | null;
}

/** A validated generation request. */
export interface GenerationRequest {
  api: SimGenerationApi;
  /** Prompt text (every message's content joined by newlines), for the EOS hash. */
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

/** One tool-call fragment of a streamed answer: the call's name on its first, then argument text. */
export interface ToolCallPart {
  name?: string;
  arguments: string;
  first: boolean;
}

/** Writes one streamed answer: start, then token by token, then finish. */
export interface SimStream {
  /** The events sent with the headers, before any token (none for some APIs). */
  start(): void;
  /** One generated token: reasoning or visible text. */
  token(text: string, reasoning: boolean): void;
  /** One tool-call fragment (APIs with tools). */
  toolCall?(part: ToolCallPart): void;
  /** The end of the answer; `usage` undefined when it is withheld (the no-usage fault). */
  finish(finish: FinishReason, usage: Usage | undefined): void;
}

/** A generation API: its paths, its request and its answer. */
export interface SimGenerationApi {
  readonly kind: 'generation';
  readonly name: string;
  readonly paths: readonly string[];
  /** The start of its response ids. */
  readonly idPrefix: string;
  /** Its answers begin with reasoning tokens (--reasoning-tokens); completions' do not. */
  readonly reasoning: boolean;
  /** Reads the body's API-specific fields (throws ApiError for a bad one). */
  read(body: Record<string, unknown>): RequestParts;
  /** The stream writer of one answer. */
  stream(who: ResponseIdentity, request: GenerationRequest, write: (chunk: string) => void): SimStream;
  /** The whole answer of a request that did not ask to stream. */
  body(
    who: ResponseIdentity,
    request: GenerationRequest,
    text: { content: string; reasoning: string },
    end: { finish: FinishReason; usage: Usage | undefined; reasoningTokens: number },
  ): object;
}

/** The request a pooling API charges to the engine (its prompt tokens) and the body that answers it. */
export interface PoolingAnswer {
  promptTokens: number;
  answer: () => object;
}

/** A pooling API (embeddings, rerank): one body, charged to the engines as a prefill. */
export interface SimPoolingApi {
  readonly kind: 'pooling';
  readonly name: string;
  readonly paths: readonly string[];
  read(body: Record<string, unknown>, served: { model: string; maxModelLen: number }): PoolingAnswer;
}

/** One API engine-sim serves. */
export type SimApi = SimGenerationApi | SimPoolingApi;

/** One server-sent event carrying `data` (JSON unless a string), optionally named. */
export function sseEvent(data: object | string, event?: string): string {
  const line = `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
  return event === undefined ? line : `event: ${event}\n${line}`;
}
