// What one API is, on both sides of the wire, as every API module in this folder states it: a
// descriptor (its name and path, what it measures, what a plan may ask of it, how it
// authenticates) and an adapter (how its bodies are built and how its responses are read: which
// events carry text or reasoning, which one ends the stream, where usage is and what it is
// called). Everything else (timing, the SSE scan, classification, records) is shared by all APIs.
//
// An API module imports only this file (and node built-ins): the registry loads the modules while
// the plan schema is being evaluated, so a module reaching back into the plan's files would wait
// on itself.
import type { LatencyMetric } from '../metrics.js';
import { promptText } from '../prompt-text.js';

/** One chat message (a dataset record's, a conversation's turn). */
export interface ChatMessage {
  role: string;
  content: string;
  /** An assistant reply that called tools (an agentic session sends it back, prompt.tool_loop). */
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  /** A role "tool" message: the call it answers. */
  tool_call_id?: string;
}

/** What the requests of one API can be measured by. */
export interface ApiMetrics {
  /** The response streams tokens as server-sent events (else it is one JSON body). */
  streamed: boolean;
  /** Latency metrics this API's requests can never have (they are absent, not zero). */
  notApplicable: readonly LatencyMetric[];
  /** One sentence for run.json saying why. */
  note: string;
}

/** Every latency metric applies to an API whose tokens stream. */
export const STREAMED: ApiMetrics = { streamed: true, notApplicable: [], note: 'streamed tokens: every latency metric applies' };

/** The metrics an API answered in one JSON body can never have: it has no first token and generates none. */
export const ONE_BODY_NOT_APPLICABLE: readonly LatencyMetric[] = [
  'ttft',
  'ttfo',
  'tpot',
  'ntpot',
  'itl',
  'visible_generation',
  'ttft_from_intended',
];

/** What an API is: everything the plan, its validation, the doctor and the agent need to know of it. */
export interface ApiDescriptor {
  /** Its name in a plan (`target.api`, `class.api`). */
  readonly name: string;
  /** Where it stands in lists (the plan schema's enum, help texts): lower first. */
  readonly order: number;
  /** One phrase for the plan schema: the path and what the API is. */
  readonly summary: string;
  /**
   * Path below the base URL, e.g. `/chat/completions`; `{model}` in it stands for the target's
   * model (an API that names the model in its path: `/models/{model}:streamGenerateContent`), see pathFor.
   */
  readonly path: string;
  /** Which metrics a request of this API can have. */
  readonly metrics: ApiMetrics;
  /**
   * Whether the server renders a request through the model's chat template before tokenizing it
   * (a conversation of messages), or tokenizes its text as sent (completions' prompt, embeddings'
   * inputs). Prompt counting follows this, so a request is counted as it is served.
   */
  readonly chatTemplated: boolean;
  /** A request is a batch of `prompt.batch_size` inputs answered in one body (embeddings, rerank). */
  readonly batched: boolean;
  /** It takes per-request bodies (datasets, traces, length distributions): one conversation each. */
  readonly perRequest: boolean;
  /** It takes multi-turn sessions (the whole conversation sent each turn). */
  readonly sessions: boolean;
  /** It takes `prompt.tools` (function tools offered with every request). */
  readonly tools: boolean;
  /** It takes `prompt.images` (image parts beside the text). */
  readonly images: boolean;
  /** `loadfleet doctor` sends it one short probe request, built and read by this API's own adapter. */
  readonly doctorProbe: boolean;
  /** The headers that carry the API key (`undefined` without one) and any version the API requires. */
  authHeaders(key: string | undefined): Record<string, string>;
}

/**
 * How an API's events are told apart without parsing them (agent/sse.ts classifyEvent): the
 * patterns run over each event's JSON text, so they must only match unescaped keys and values.
 */
export interface DeltaPatterns {
  /** Matches a non-empty visible-text delta. */
  content: RegExp;
  /** Matches a non-empty reasoning delta, or null for APIs without reasoning. */
  reasoning: RegExp | null;
  /** An exact payload that is not JSON and ends the stream (`[DONE]`), if the API (or a server of it) sends one. */
  terminator?: string;
  /** Matches the JSON event that ends the stream, for APIs whose end is an event of their own. */
  doneEvent?: RegExp;
  /** Matches an event carrying a usage object (an API may spread usage over several: UsageCounts). */
  usage: RegExp;
  /** Matches an API's own error event (besides `{"error": …}`), if it has one. */
  error?: RegExp;
  /** Matches a streamed tool-call delta, for APIs that have them. */
  toolCall?: RegExp;
  /**
   * Matches an event that opens a tool call (its id and name) and carries none of its tokens, for
   * APIs that announce a call apart from its argument deltas: captured for the call's head, never
   * counted as output or timed.
   */
  toolHead?: RegExp;
}

/** One API's request bodies and response contract, for one class's options. */
export interface ApiAdapter {
  /** What the API is. */
  readonly descriptor: ApiDescriptor;
  /** Path below the base URL (the descriptor's). */
  readonly path: string;
  /** How its events are classified without parsing them. */
  readonly patterns: DeltaPatterns;
  /** Which metrics a request of this API can have (the descriptor's). */
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
  /**
   * The token counts one parsed event (patterns.usage matched it) or a whole JSON body carries,
   * null where it carries none. A stream's usage is the fold of its events: a count an event
   * carries replaces the earlier one (an API may send input and output counts in different events).
   */
  usage(event: unknown): UsageCounts;
  /** An API answered in one JSON body (metrics.streamed false): how many results it holds (one per input), null if unreadable. */
  items?(body: unknown): number | null;
  /** Inputs per request (embeddings), where an API sends several. */
  batchSize?: number;
}

/** What a class asks of its API's bodies beyond the text (validated against the descriptor). */
export interface AdapterOptions {
  /** Inputs per request (batched APIs). */
  batchSize: number;
  /** The plan's tool definitions (name, description, parameters), offered with every request in the API's own shape. */
  tools?: readonly object[];
  toolChoice?: string;
  /** Image parts per request (each a marker the agent fills with a data URI). */
  images?: number;
}

/** One API: its descriptor and its adapter for a class's options. The registry loads these. */
export interface ApiModule {
  readonly descriptor: ApiDescriptor;
  adapter(options: AdapterOptions): ApiAdapter;
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

/** An API's path for a model: `{model}` replaced by the model's name, URL-encoded (a path without it is unchanged). */
export function pathFor(path: string, model: string): string {
  return path.replaceAll('{model}', encodeURIComponent(model));
}

/** `Authorization: Bearer <key>`, the OpenAI-compatible servers' key header. */
export function bearerAuth(key: string | undefined): Record<string, string> {
  return key ? { authorization: `Bearer ${key}` } : {};
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

/** A conversation as one text, for APIs without roles: its messages' text, one per line. */
export function completionPrompt(messages: readonly ChatMessage[]): string {
  return messages.map((m) => m.content).join('\n');
}

/**
 * The head of input `input` of a batched request: the request's head with `-input` appended, so
 * no input of a batch can be answered from another. The calibration counts these texts (the
 * suffix costs tokens on a real tokenizer: two on the tiny GGUF's BPE) and the adapter sends them.
 */
export function batchInputHead(head: string, input: number): string {
  return `${head}-${input}`;
}

/**
 * The `batchSize` texts of one batched request (embeddings' inputs, rerank's documents): the
 * template's text with its head mark suffixed per input (batchInputHead), so none answers another.
 */
export function batchTexts(text: string, batchSize: number): string[] {
  const parts = text.split(HEAD_MARK);
  return Array.from({ length: batchSize }, (_, i) => parts.join(batchInputHead(HEAD_MARK, i)));
}

// The unique head is spliced where this marker stands in the serialised template (an adapter may
// place it more than once: a batched API suffixes each copy).
/** Where the head goes in the text a body builder is handed (splitTemplate). */
export const HEAD_MARK = '\u0001HEAD\u0001';
const HEAD_MARK_JSON = JSON.stringify(HEAD_MARK).slice(1, -1);

/** Serialises `body` with the text field holding prefix + HEAD + suffix (+ the canary instruction), then splits at every HEAD. */
export function splitTemplate(build: (text: string) => Record<string, unknown>, input: BodyInput): string[] {
  const text = promptText({ prefix: input.prefix, suffix: input.suffix }, HEAD_MARK, input.canary);
  return JSON.stringify(build(text)).split(HEAD_MARK_JSON);
}

/** A pattern that never matches: the events of an API answered in one JSON body are never classified. */
export const NEVER = /(?!)/;

// Image parts are built once per class with markers in place of the pixels; the agent fills each
// request's images in at send time (agent/images.ts makes them). An API that takes a data URI
// (chat's image_url) uses the URI marker; one that takes the media type and the base64 bytes
// apart (the Messages API's base64 source) uses the other two.
/** Where image k's whole data URI goes in a body. */
export function imageMarker(k: number): string {
  return `@@LF_IMAGE_${k}@@`;
}

/** Where image k's media type (`image/png`) goes in a body. */
export function imageMediaMarker(k: number): string {
  return `@@LF_IMAGE_${k}_MEDIA@@`;
}

/** Where image k's base64 bytes go in a body. */
export function imageDataMarker(k: number): string {
  return `@@LF_IMAGE_${k}_DATA@@`;
}

/** A body with its image markers replaced by the request's images (data URIs, `data:<type>;base64,<bytes>`). */
export function fillImages(body: string, uris: readonly string[]): string {
  // On the send path of every image request, over a body often past 100 KB: an indexOf walk that
  // concatenates slices (V8 keeps them as ropes) costs about 1 µs; a replace per marker form, or
  // one regular expression, flattens and rescans the body each time (550–620 µs measured).
  let out = '';
  let from = 0;
  for (let at = body.indexOf(IMAGE_PREFIX); at !== -1; at = body.indexOf(IMAGE_PREFIX, from)) {
    const end = body.indexOf('@@', at + IMAGE_PREFIX.length);
    if (end === -1) break;
    const [k, part] = body.slice(at + IMAGE_PREFIX.length, end).split('_');
    const uri = uris[Number(k)];
    out += body.slice(from, at);
    if (uri === undefined) out += body.slice(at, end + 2);
    else if (part === undefined) out += uri;
    else out += part === 'MEDIA' ? uri.slice('data:'.length, uri.indexOf(';')) : uri.slice(uri.indexOf(',') + 1);
    from = end + 2;
  }
  return from === 0 ? body : out + body.slice(from);
}

const IMAGE_PREFIX = '@@LF_IMAGE_';
