// Pure reading of the answers to a doctor's requests: the /models list, and an SSE stream (or,
// from a server that ignores `stream: true`, one JSON body) reduced to the facts the report needs —
// content arrived, which reasoning field names carried text, whether a usage object came, whether
// the stream ended with [DONE]. The agent's own parser (agent/sse.ts) is tuned for speed; this one is for telling.

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
  const facts: StreamFacts = {
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
  const dataLines = body
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim());
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
