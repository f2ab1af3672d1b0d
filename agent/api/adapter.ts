// What differs between the OpenAI-compatible APIs, on both sides of the wire: the path and the
// body (from one text or from a conversation of messages); and the response contract: which
// events carry text, which one ends the stream, where usage is and what it is called, and which
// latency metrics the API can have at all. Everything else (timing, SSE, classification) is shared.
import type { ApiMetrics } from '../../shared/api-kinds.js';
import type { ChatMessage } from '../../shared/plan.js';
import { promptText } from '../../shared/prompt-text.js';
import type { DeltaPatterns } from '../sse.js';

/** One OpenAI-compatible API flavour. */
export interface ApiAdapter {
  /** Path below the base URL, e.g. `/chat/completions`. */
  readonly path: string;
  /** How its events are told apart without parsing them (sse.ts classifyEvent). */
  readonly patterns: DeltaPatterns;
  /** Which metrics a request of this API can have (shared/api-kinds.ts). */
  readonly metrics: ApiMetrics;
  /**
   * A body template split at every place the per-request head goes (the prompt's head, and the
   * canary instruction's marker), so the (possibly 100 KB) prompt is JSON-escaped once per class
   * instead of once per request: the body is the parts joined by the head.
   */
  bodyTemplate(input: BodyInput): string[];
  /** The JSON body of a conversation (sessions send the whole history each turn). */
  bodyFromMessages(input: BodyFields, messages: readonly ChatMessage[]): string;
  /** The visible and reasoning text one parsed event carries ("" where none), and any tool-call argument fragments. */
  deltaText(event: unknown): DeltaText;
  /** The token counts of a parsed event that carries usage (patterns.usage matched it), or of a whole JSON body. */
  usage(event: unknown): UsageCounts;
  /** An API answered in one JSON body (metrics.streamed false): how many results it holds (one per input), null if unreadable. */
  items?(body: unknown): number | null;
  /** Inputs per request (embeddings), where an API sends several. */
  batchSize?: number;
}

/** What one event adds to a response's text. */
export interface DeltaText {
  visible: string;
  reasoning: string;
  /** Tool-call argument fragments, by the call's index. */
  toolArguments?: { index: number; arguments: string; id?: string; name?: string }[];
}

/** The fields of a body besides its text. */
export interface BodyFields {
  model: string;
  maxTokens: number;
  ignoreEos: boolean;
}

/** What a request body is made of. */
export interface BodyInput extends BodyFields {
  /** Prompt text before the unique head (a shared prefix), maybe empty. */
  prefix: string;
  /** Prompt text after the unique head. */
  suffix: string;
  /** Ends the prompt asking the model to begin its answer with the head (a canary marker). */
  canary: boolean;
}

/** Token counts a server reported, null where it did not. */
export interface UsageCounts {
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
}

/** Where requests go for a plan's base URL: the origin, the API's path, and `{base}/models` for the warm-up. */
export function endpointPaths(baseUrl: string, adapter: ApiAdapter): { origin: string; path: string; modelsPath: string } {
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  return { origin: base.origin, path: basePath + adapter.path, modelsPath: `${basePath}/models` };
}

/** The first choice of a parsed event, or an empty object. */
export function firstChoice(event: unknown): Record<string, unknown> {
  const choices = (event as { choices?: unknown } | null)?.choices;
  const first = Array.isArray(choices) ? (choices[0] as unknown) : undefined;
  return typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : {};
}

/** A string field, or "". */
export function textOf(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** A finite number, or null. */
export function numberOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** An object field, or an empty object. */
export function objectOf(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
}

/** The common body fields of chat and completions: streamed, with usage, and exactly max_tokens when ignore_eos. */
export function commonFields(input: BodyFields): Record<string, unknown> {
  return {
    model: input.model,
    max_tokens: input.maxTokens,
    stream: true,
    stream_options: { include_usage: true },
    ...(input.ignoreEos ? { ignore_eos: true } : {}),
  };
}

/** The usage of chat and completions: prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens. */
export function openaiUsage(event: unknown): UsageCounts {
  const usage = objectOf(objectOf(event).usage);
  return {
    prompt_tokens: numberOrNull(usage.prompt_tokens),
    completion_tokens: numberOrNull(usage.completion_tokens),
    cached_tokens: numberOrNull(objectOf(usage.prompt_tokens_details).cached_tokens),
  };
}

// The unique head is spliced where this marker stands in the serialised template (an adapter may
// place it more than once: openai-embeddings.ts suffixes each copy).
/** Where the head goes in the text a body builder is handed (splitTemplate). */
export const HEAD_MARK = '\u0001HEAD\u0001';
const HEAD_MARK_JSON = JSON.stringify(HEAD_MARK).slice(1, -1);

/** Serialises `body` with the text field holding prefix + HEAD + suffix (+ the canary instruction), then splits at every HEAD. */
export function splitTemplate(build: (text: string) => Record<string, unknown>, input: BodyInput): string[] {
  const text = promptText({ prefix: input.prefix, suffix: input.suffix }, HEAD_MARK, input.canary);
  return JSON.stringify(build(text)).split(HEAD_MARK_JSON);
}
