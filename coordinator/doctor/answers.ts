// Pure reading of the answers to a doctor's requests: the /models list, and an SSE stream (or,
// from a server that ignores `stream: true`, one JSON body) reduced to the facts the report needs —
// content arrived, which reasoning field names carried text, whether a usage object came, whether
// the stream ended with [DONE] (or, for the Messages API, message_stop). The agent's own parser
// (agent/sse.ts) is tuned for speed; this one is for telling.
import { anthropicMessages } from '../../shared/apis/anthropic-messages.js';

/** What one answer showed. */
export interface StreamFacts {
  /** The body was `text/event-stream` framing (data: lines), not one JSON document. */
  streamed: boolean;
  events: number;
  contentChunks: number;
  reasoningChunks: number;
  /** Delta field names that carried reasoning text, in order of first appearance. */
  reasoningFields: string[];
  usage: { prompt_tokens: number | null; completion_tokens: number | null } | null;
  done: boolean;
  finishReason: string | null;
  /** Lines that were not JSON (a broken stream). */
  garbled: number;
  /** An `error` object the server sent inside the stream or body. */
  error: string | null;
}

// Names servers have used for streamed reasoning text (vLLM, SGLang: reasoning_content; some
// gateways and newer vLLM: reasoning; a few: thinking).
const REASONING_FIELDS = ['reasoning_content', 'reasoning', 'thinking'];

/** Reads a stream or JSON body. */
export function readAnswer(body: string): StreamFacts {
  const facts = noFacts();
  const dataLines = dataLinesOf(body);
  if (dataLines.length === 0) {
    const one = parse(body.trim());
    if (one !== undefined) readEvent(one, facts, 'message');
    else if (body.trim() !== '') facts.garbled++;
    return facts;
  }
  facts.streamed = true;
  for (const data of dataLines) {
    if (data === '[DONE]') {
      facts.done = true;
      continue;
    }
    const event = parse(data);
    if (event === undefined) {
      facts.garbled++;
      continue;
    }
    facts.events++;
    readEvent(event, facts, 'delta');
  }
  return facts;
}

/**
 * Reads a Messages API stream (typed events: text_delta content, thinking_delta reasoning, usage
 * folded from message_start and message_delta, message_stop its end, an `error` event its
 * failure) or one message body, through the API's own adapter (shared/apis/).
 */
export function readMessagesAnswer(body: string): StreamFacts {
  const facts = noFacts();
  const dataLines = dataLinesOf(body);
  if (dataLines.length === 0) {
    const one = parse(body.trim()) as Record<string, unknown> | undefined;
    if (one === undefined) {
      if (body.trim() !== '') facts.garbled++;
      return facts;
    }
    readMessagesEvent(one, facts);
    for (const block of Array.isArray(one.content) ? one.content : []) {
      const b = block as Record<string, unknown>;
      if (b.type === 'text' && nonEmpty(b.text)) facts.contentChunks++;
      if (b.type === 'thinking' && nonEmpty(b.thinking)) facts.reasoningChunks++;
    }
    return facts;
  }
  facts.streamed = true;
  for (const data of dataLines) {
    if (data === '[DONE]') continue;
    const event = parse(data);
    if (event === undefined) {
      facts.garbled++;
      continue;
    }
    facts.events++;
    readMessagesEvent(event as Record<string, unknown>, facts);
    const text = anthropicMessages.deltaText(event);
    if (text.visible !== '') facts.contentChunks++;
    if (text.reasoning !== '') {
      facts.reasoningChunks++;
      if (!facts.reasoningFields.includes('thinking')) facts.reasoningFields.push('thinking');
    }
  }
  return facts;
}

function readMessagesEvent(e: Record<string, unknown>, facts: StreamFacts): void {
  if (e.type === 'error') facts.error = errorText(e.error ?? e);
  if (e.type === 'message_stop') facts.done = true;
  const stop = (e.type === 'message_delta' ? (e.delta as Record<string, unknown> | undefined)?.stop_reason : e.stop_reason) as unknown;
  if (typeof stop === 'string') facts.finishReason = stop;
  if (e.type !== 'message_start' && e.type !== 'message_delta' && e.type !== 'message') return;
  const u = anthropicMessages.usage(e.type === 'message' ? { usage: e.usage } : e);
  // Input counts come in message_start and output in message_delta: fold them as the agent does.
  if (u.prompt_tokens === null && u.completion_tokens === null) return;
  facts.usage = {
    prompt_tokens: u.prompt_tokens ?? facts.usage?.prompt_tokens ?? null,
    completion_tokens: u.completion_tokens ?? facts.usage?.completion_tokens ?? null,
  };
}

function noFacts(): StreamFacts {
  return {
    streamed: false,
    events: 0,
    contentChunks: 0,
    reasoningChunks: 0,
    reasoningFields: [],
    usage: null,
    done: false,
    finishReason: null,
    garbled: 0,
    error: null,
  };
}

// The payloads of a body's `data:` lines (none when it is not an event stream).
function dataLinesOf(body: string): string[] {
  return body
    .split(/\r\n|\r|\n/) // the line ends SSE allows, as the agent's parser reads them
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim());
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function readEvent(event: unknown, facts: StreamFacts, key: 'delta' | 'message'): void {
  const e = (event ?? {}) as { choices?: unknown; usage?: unknown; error?: unknown };
  if (e.error !== undefined && e.error !== null) facts.error = errorText(e.error);
  if (typeof e.usage === 'object' && e.usage !== null) {
    const u = e.usage as { prompt_tokens?: unknown; completion_tokens?: unknown };
    facts.usage = {
      prompt_tokens: typeof u.prompt_tokens === 'number' ? u.prompt_tokens : null,
      completion_tokens: typeof u.completion_tokens === 'number' ? u.completion_tokens : null,
    };
  }
  const choice = Array.isArray(e.choices) ? (e.choices[0] as Record<string, unknown> | undefined) : undefined;
  if (!choice) return;
  if (typeof choice.finish_reason === 'string') facts.finishReason = choice.finish_reason;
  const part = (choice[key] ?? {}) as Record<string, unknown>;
  if (nonEmpty(part.content) || nonEmpty(choice.text)) facts.contentChunks++;
  let reasoned = false;
  for (const field of REASONING_FIELDS) {
    if (!nonEmpty(part[field])) continue;
    reasoned = true;
    if (!facts.reasoningFields.includes(field)) facts.reasoningFields.push(field);
  }
  if (reasoned) facts.reasoningChunks++;
}

function nonEmpty(v: unknown): boolean {
  return typeof v === 'string' && v !== '';
}

/** The message of an OpenAI-style error object (or whatever the server sent). */
export function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  const m = (error as { message?: unknown }).message;
  return typeof m === 'string' ? m : JSON.stringify(error).slice(0, 200);
}

/** Model ids from a /models body (OpenAI's `{data: [{id}]}`); [] when it is not that shape. */
export function modelIds(body: string): string[] {
  try {
    const data = (JSON.parse(body) as { data?: unknown }).data;
    return Array.isArray(data) ? data.map((m) => (m as { id?: unknown }).id).filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}
