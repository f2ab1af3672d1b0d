// Pure reading of the answers to a doctor's requests: the /models list, and one API's answer — an
// SSE stream (or, from a server that ignores `stream: true`, one JSON body) — read through that
// API's own adapter from shared/apis/ (its patterns, delta text and usage: the contract the agent
// measures by), reduced to the facts the report needs: content arrived, which reasoning field
// names carried text, whether usage came, whether the stream ended as the API ends it.
import type { ApiAdapter } from '../../shared/apis/contract.js';

/** What one answer showed. */
export interface StreamFacts {
  /** The body was `text/event-stream` framing (data: lines), not one JSON document. */
  streamed: boolean;
  events: number;
  contentChunks: number;
  reasoningChunks: number;
  /** Field names that carried reasoning text, in order of first appearance. */
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
// gateways and newer vLLM: reasoning; a few, and the Messages API: thinking). Only named in the report.
const REASONING_FIELDS = ['reasoning_content', 'reasoning', 'thinking'];
// Where APIs say why an answer stopped (OpenAI: finish_reason; Messages: stop_reason; Gemini: finishReason).
const FINISH_FIELDS = ['finish_reason', 'stop_reason', 'finishReason'];
// Where a one-body answer holds its text (chat's message.content, completions' text, a content block's text).
const TEXT_FIELDS = ['content', 'text'];

/** How the API ends a stream, for people: its end payload (`[DONE]`) or its end event's name (`message_stop`). */
export function streamEnd(adapter: ApiAdapter): string {
  const p = adapter.patterns;
  if (p.doneEvent) return /"([^"]+)"\)?$/.exec(p.doneEvent.source)?.[1] ?? 'its end event';
  return p.terminator ?? 'its end';
}

/** Reads an API's answer (a stream or one JSON body) through its adapter. */
export function readApiAnswer(adapter: ApiAdapter, body: string): StreamFacts {
  const facts = noFacts();
  const dataLines = dataLinesOf(body);
  if (dataLines.length === 0) {
    const one = parse(body.trim());
    if (one === undefined) {
      if (body.trim() !== '') facts.garbled++;
      return facts;
    }
    readError(adapter, JSON.stringify(one), one, facts);
    if (findStrings(one, TEXT_FIELDS).length > 0) facts.contentChunks++;
    noteFields(one, facts);
    foldUsage(adapter, one, facts);
    return facts;
  }
  facts.streamed = true;
  const p = adapter.patterns;
  for (const data of dataLines) {
    // An API with an end event of its own ends there; a trailing terminator some servers add is not its end.
    if (p.terminator !== undefined && data === p.terminator) {
      if (!p.doneEvent) facts.done = true;
      continue;
    }
    const event = parse(data);
    if (event === undefined) {
      facts.garbled++;
      continue;
    }
    facts.events++;
    if (p.doneEvent?.test(data)) facts.done = true;
    readError(adapter, data, event, facts);
    const text = adapter.deltaText(event);
    if (text.visible !== '') facts.contentChunks++;
    if (text.reasoning !== '') facts.reasoningChunks++;
    noteFields(event, facts);
    if (p.usage.test(data)) foldUsage(adapter, event, facts);
  }
  return facts;
}

function readError(adapter: ApiAdapter, text: string, event: unknown, facts: StreamFacts): void {
  const e = event as { error?: unknown };
  if (typeof event === 'object' && event !== null && e.error !== undefined && e.error !== null) facts.error = errorText(e.error);
  else if (adapter.patterns.error?.test(text)) facts.error = errorText(event);
}

// Reasoning field names that carried text, and the stop reason, wherever the API puts them.
function noteFields(event: unknown, facts: StreamFacts): void {
  for (const [field] of findStrings(event, REASONING_FIELDS)) if (!facts.reasoningFields.includes(field)) facts.reasoningFields.push(field);
  const stop = findStrings(event, FINISH_FIELDS)[0];
  if (stop) facts.finishReason = stop[1];
}

// Counts an event carries replace the earlier ones (an API may send input and output counts apart).
function foldUsage(adapter: ApiAdapter, event: unknown, facts: StreamFacts): void {
  const u = adapter.usage(event);
  if (u.prompt_tokens === null && u.completion_tokens === null) return;
  facts.usage = {
    prompt_tokens: u.prompt_tokens ?? facts.usage?.prompt_tokens ?? null,
    completion_tokens: u.completion_tokens ?? facts.usage?.completion_tokens ?? null,
  };
}

// Non-empty string values under any of `keys`, at any depth (an answer is small), in document order.
function findStrings(v: unknown, keys: readonly string[], depth = 0): [string, string][] {
  if (depth > 6 || typeof v !== 'object' || v === null) return [];
  const out: [string, string][] = [];
  for (const [k, x] of Object.entries(v)) {
    if (keys.includes(k) && typeof x === 'string' && x !== '') out.push([k, x]);
    else out.push(...findStrings(x, keys, depth + 1));
  }
  return out;
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
