// What differs between the OpenAI chat and completions APIs: the path, the body and which delta
// fields carry text. Everything else (timing, SSE, classification) is shared.
import { promptText } from '../../shared/prompt-text.js';
import type { DeltaPatterns } from '../sse.js';

/** One OpenAI-compatible API flavour. */
export interface ApiAdapter {
  /** Path below the base URL, e.g. `/chat/completions`. */
  readonly path: string;
  readonly patterns: DeltaPatterns;
  /**
   * A body template split at every place the per-request head goes (the prompt's head, and the
   * canary instruction's marker), so the (possibly 100 KB) prompt is JSON-escaped once per class
   * instead of once per request: the body is the parts joined by the head.
   */
  bodyTemplate(input: BodyInput): string[];
  /** The visible and reasoning text one parsed event carries ("" where none). */
  deltaText(event: unknown): { visible: string; reasoning: string };
}

/** What a request body is made of. */
export interface BodyInput {
  model: string;
  /** Prompt text before the unique head (a shared prefix), maybe empty. */
  prefix: string;
  /** Prompt text after the unique head. */
  suffix: string;
  /** Ends the prompt asking the model to begin its answer with the head (a canary marker). */
  canary: boolean;
  maxTokens: number;
  ignoreEos: boolean;
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

/** The common body fields: streamed, with usage, and exactly max_tokens when ignore_eos. */
export function commonFields(input: BodyInput): Record<string, unknown> {
  return {
    model: input.model,
    max_tokens: input.maxTokens,
    stream: true,
    stream_options: { include_usage: true },
    ...(input.ignoreEos ? { ignore_eos: true } : {}),
  };
}

// The unique head is spliced where this marker stands in the serialised template.
const HEAD_MARK = '\u0001HEAD\u0001';
const HEAD_MARK_JSON = JSON.stringify(HEAD_MARK).slice(1, -1);

/** Serialises `body` with the text field holding prefix + HEAD + suffix (+ the canary instruction), then splits at every HEAD. */
export function splitTemplate(build: (text: string) => Record<string, unknown>, input: BodyInput): string[] {
  const text = promptText({ prefix: input.prefix, suffix: input.suffix }, HEAD_MARK, input.canary);
  return JSON.stringify(build(text)).split(HEAD_MARK_JSON);
}
