// One streamed request over undici's `dispatch` (its one primitive, no body stream objects), with
// every timestamp taken when the bytes arrive, before the SSE parser or any JSON work.
import type { Dispatcher } from 'undici';
import type { RequestRecord, RequestStatus } from '../shared/metrics.js';
import { blankRecord } from '../shared/metrics.js';
import type { ApiAdapter } from './api/adapter.js';
import { canaryFailure, checkCanary } from './canary.js';
import { readAt } from './due-sends.js';
import { GapList } from './gap-list.js';
import { unwatch, watch } from './in-flight.js';
import { loopBusy } from './loop-busy.js';
import type { DeltaPatterns } from './sse.js';
import { classifyEvent, EventFlag, SseParser } from './sse.js';
import { TextCapture } from './text-capture.js';

/** Longest error text kept per request (spec: ≤ 2 KiB). */
const MAX_ERROR_BYTES = 2048;
/** Largest JSON body (an API answered in one body, e.g. embeddings) read; beyond it the request fails. */
const MAX_JSON_BODY_BYTES = 64 << 20;

/** What a request needs besides its body. */
export interface RequestSpec {
  className: string;
  requestIndex: number;
  intendedNs: number | null;
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** A stream without usage is `missing_usage` (a failure) rather than ok with counted output. */
  requireUsage: boolean;
  /** Counts generated text with the plan's tokenizer (when this agent has it) for a server without usage. */
  countOutput: ((text: string) => number) | null;
  /** The canary marker the response must begin with (prompt.canary), or null. */
  canaryMarker: string | null;
  /** Keep the reply's visible text (multi-turn sessions send it back as the assistant message). */
  captureContent?: boolean;
  /** The model name the body carries, recorded for a class with LoRA adapters. */
  model?: string;
  /** The class offers tools: time tool-call deltas and check each call's arguments are JSON. */
  tools?: boolean;
  /** Record the request body's size (classes sending images). */
  stateBytes?: boolean;
}

/** A finished request: its record and, for ITL, the gaps between its content chunks. */
export interface RequestResult {
  record: RequestRecord;
  /** Empty unless the request succeeded; whoever consumes it releases it (gap-list.ts). */
  contentGaps: GapList;
  /** The reply's content text, when the spec asked for it. */
  content?: string;
  /** The reply's tool calls (id, name, joined arguments), when the spec asked for content and the reply called tools. */
  toolCalls?: { id: string; name: string; arguments: string }[];
}

/** Sends one request and resolves when it has ended in any way; it never rejects. */
export function sendRequest(
  dispatcher: Dispatcher,
  adapter: ApiAdapter,
  spec: RequestSpec,
  nowNs: () => number,
  signal: AbortSignal,
): Promise<RequestResult> {
  return new Promise((resolve) => startRequest(dispatcher, adapter, spec, nowNs, signal, resolve));
}

/**
 * sendRequest without a promise: `onDone` is called once, when the request has ended in any way.
 * A run's loops use it so an open stream holds no promise, async frame or reaction (about 1 KiB
 * a stream at 10,000 streams, docs/performance.md).
 */
export function startRequest(
  dispatcher: Dispatcher,
  adapter: ApiAdapter,
  spec: RequestSpec,
  nowNs: () => number,
  signal: AbortSignal,
  onDone: (r: RequestResult) => void,
): void {
  prepareRequest(dispatcher, adapter, spec, nowNs, signal, onDone).send();
}

/** A request built and not yet sent: `send()` stamps it and hands it to undici. */
export interface PreparedRequest {
  send(): void;
}

/**
 * startRequest in two steps: everything but the stamp and the dispatch is done here, so an open
 * loop can build the next request while it waits for that request's instant (agent/load/open-loop.ts).
 */
export function prepareRequest(
  dispatcher: Dispatcher,
  adapter: ApiAdapter,
  spec: RequestSpec,
  nowNs: () => number,
  signal: AbortSignal,
  onDone: (r: RequestResult) => void,
): PreparedRequest {
  const tracker = new StreamTracker(spec, adapter, nowNs, signal, onDone);
  const options: Dispatcher.DispatchOptions = {
    origin: spec.origin,
    path: spec.path,
    method: 'POST',
    headers: spec.headers,
    body: spec.body,
    headersTimeout: 0,
    bodyTimeout: 0,
  };
  return { send: () => tracker.send(dispatcher, options) };
}

const noTools = new WeakMap<DeltaPatterns, DeltaPatterns>();

// Two regular expressions fewer per event for a class without tools (most of them).
function withoutTools(p: DeltaPatterns): DeltaPatterns {
  let out = noTools.get(p);
  if (out === undefined) {
    const { toolCall: _call, toolHead: _head, ...rest } = p;
    out = rest;
    noTools.set(p, out);
  }
  return out;
}

// The dispatch handler: one per request. Holds the timing state machine.
//
// It is an undici handler of the callback kind (onConnect, onHeaders, onData, onComplete,
// onError), which undici 7 still runs natively: a controller-kind handler (onRequestStart,
// onResponseData…) is wrapped per request in an UnwrapHandler and an UnwrapController, and the
// controller keeps the response's raw header Buffers, slices of the socket read that carried
// them, for as long as the stream is open: about 2 KiB per open stream, and one more call per
// chunk between a socket read and its stamp. Memory per stream is in docs/performance.md.
//
// Nothing here captures the spec: its body and headers belong to undici's request once sent (a
// prepared request's closure holds them until then).
class StreamTracker implements Dispatcher.DispatchHandler {
  readonly record: RequestRecord;
  private readonly gaps = new GapList();
  private readonly signal: AbortSignal;
  /** undici's abort for this request (onConnect), once it has one. */
  private abortRequest: ((err?: Error) => void) | undefined;
  private readonly parser: SseParser;
  /** The adapter's patterns, without the tool-call ones unless the class offers tools (their flags are read only then). */
  private readonly patterns: DeltaPatterns;
  /** Its timeout (in-flight.ts ends it then: one timer for all, not one per request). */
  readonly timeoutMs: number;
  /** Set when it is sent (a request may be built ahead of its instant). */
  deadlineMs = 0;
  private chunkNs = 0;
  /** A bound on how long the bytes stamped at chunkNs had waited unread (loop-busy.ts). */
  private chunkDelayBoundNs = 0;
  private lastContentNs: number | null = null;
  private flags = 0;
  private errorBody = '';
  private finished = false;
  private pendingAbort: [RequestStatus, string] | undefined;
  private readonly requireUsage: boolean;
  private readonly countOutput: ((text: string) => number) | null;
  private readonly canaryMarker: string | null;
  /** The streamed text, kept only when something will read it. */
  private readonly capture: TextCapture | null;
  /** Sessions send the reply back as the next turn's assistant message. */
  private readonly captureContent: boolean;
  /** Tool-call deltas are timed and their arguments checked (spec.tools). */
  private readonly tools: boolean;
  /** The body of an API answered in one JSON body (not SSE), null for streamed APIs. */
  private readonly json: { chunks: Buffer[]; bytes: number; lastNs: number | null } | null;

  constructor(
    spec: RequestSpec,
    private readonly adapter: ApiAdapter,
    private readonly nowNs: () => number,
    signal: AbortSignal,
    private readonly onDone: (r: RequestResult) => void,
  ) {
    this.signal = signal;
    this.requireUsage = spec.requireUsage;
    this.countOutput = spec.countOutput;
    this.canaryMarker = spec.canaryMarker;
    this.captureContent = spec.captureContent === true;
    // One bounded capture serves canaries, output counting and session replies; nothing is parsed
    // while the stream runs.
    this.capture =
      spec.canaryMarker !== null || (spec.countOutput && !spec.requireUsage) || this.captureContent || spec.tools
        ? new TextCapture(adapter)
        : null;
    this.record = blankRecord(spec.className, spec.requestIndex, spec.intendedNs);
    this.json = adapter.metrics.streamed ? null : { chunks: [], bytes: 0, lastNs: null };
    if (adapter.batchSize !== undefined) this.record.inputs = adapter.batchSize;
    if (spec.model !== undefined) this.record.model = spec.model;
    if (spec.stateBytes) this.record.request_bytes = Buffer.byteLength(spec.body);
    this.tools = spec.tools === true;
    this.patterns = this.tools ? adapter.patterns : withoutTools(adapter.patterns);
    if (this.tools)
      Object.assign(this.record, { first_tool_call_ns: null, tool_call_chunks: 0, tool_calls: 0, tool_arguments_valid: null });
    this.parser = new SseParser(this);
    // undici's own timers are coarse above 1 s; this one only ends the request, it measures nothing.
    this.timeoutMs = spec.timeoutMs;
  }

  /** Dispatches the request (onDone follows when it has ended). */
  send(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): void {
    if (this.signal.aborted) {
      this.fail('aborted', 'stopped before send');
      return;
    }
    this.deadlineMs = performance.now() + this.timeoutMs;
    watch(this.signal, this);
    this.record.sent_ns = this.nowNs();
    dispatcher.dispatch(options, this);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortRequest = abort;
    if (this.pendingAbort) abort(new Error(this.pendingAbort[1]));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.record.headers_ns = this.nowNs();
    readAt(this.record.headers_ns);
    this.record.http_status = statusCode;
    if (statusCode !== 200) this.readErrorHeaders(rawHeaders);
    return true;
  }

  // A refused request's retry-after and llm-d's drop reason, read from undici's raw name/value pairs.
  private readErrorHeaders(rawHeaders: Buffer[]): void {
    let retry: string | undefined;
    let reason: string | undefined;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toString('latin1').toLowerCase();
      if (name === 'retry-after') retry ??= rawHeaders[i + 1]!.toString('latin1');
      else if (name === 'x-llm-d-request-dropped-reason') reason ??= rawHeaders[i + 1]!.toString('utf8');
    }
    const seconds = retry === undefined ? Number.NaN : Number(retry);
    this.record.retry_after_s = Number.isFinite(seconds) ? seconds : null;
    this.record.dropped_reason = reason ?? null;
  }

  onData(chunk: Buffer): boolean {
    this.chunkNs = this.nowNs();
    readAt(this.chunkNs); // a send due by now goes out after this read (due-sends.ts)
    // Only a first-content stamp carries the bound; later reads just keep its turn marker coming.
    if (this.record.first_content_ns === null) this.chunkDelayBoundNs = loopBusy.readDelayBoundNs();
    else loopBusy.noteRead();
    if (this.record.http_status !== 200) {
      if (this.errorBody.length < MAX_ERROR_BYTES) this.errorBody += chunk.toString('utf8', 0, MAX_ERROR_BYTES);
      return true;
    }
    if (this.json) {
      // Done is when the body's last bytes arrived; nothing is parsed until it has.
      this.json.lastNs = this.chunkNs;
      this.json.bytes += chunk.length;
      if (this.json.bytes <= MAX_JSON_BODY_BYTES) this.json.chunks.push(chunk);
      return true;
    }
    this.parser.push(chunk);
    return true;
  }

  onComplete(): void {
    const [status, error] = this.outcome();
    if (status === 'ok' && this.tools) this.checkToolCalls();
    if (status === 'ok' && this.canaryMarker !== null) {
      // Only a clean stream can be vouched for; a failed canary keeps its timings but not its place in the distributions.
      const canary = checkCanary(this.canaryMarker, this.capture!.text());
      this.record.canary = canary;
      if (!canary.passed) {
        this.finish('canary_failed', canaryFailure(canary));
        return;
      }
    }
    this.finish(status, error);
  }

  // A 200 counts only with every SSE event well formed and the API's end (its terminator or end event); usage only when the plan
  // requires it (many gateways and providers never send it, and TTFT and e2e do not need it).
  private outcome(): [RequestStatus, string | null] {
    const r = this.record;
    if (r.http_status !== 200) return ['http_error', this.errorBody || `HTTP ${r.http_status}`];
    if (this.json) return this.jsonOutcome(this.json);
    if (this.flags & EventFlag.MALFORMED) return ['malformed_stream', 'an SSE event was not a JSON object'];
    if (this.flags & EventFlag.ERROR) return ['incomplete_stream', 'the stream carried an error event'];
    if (r.done_ns === null)
      return [
        'incomplete_stream',
        this.parser.hasPartial() ? 'stream cut mid-event, before its end' : 'stream ended without its end event',
      ];
    if (r.output_token_source === 'usage') return ['ok', null];
    if (this.requireUsage) return ['missing_usage', 'usage was requested but not sent (target.require_usage is true)'];
    this.countWithoutUsage();
    return ['ok', null];
  }

  // Each call's arguments, joined from its fragments, must be JSON (a data-quality figure); an
  // incomplete capture proves nothing either way.
  private checkToolCalls(): void {
    const text = this.capture!.text();
    const calls = text.toolArguments ?? [];
    this.record.tool_calls = calls.length;
    if (!text.complete) return;
    this.record.tool_arguments_valid = calls.every((a) => {
      try {
        JSON.parse(a);
        return true;
      } catch {
        return false;
      }
    });
  }

  // A body answered whole: valid JSON, one result per input, usage where the plan requires it.
  // It has no first token; done is the arrival of its last bytes.
  private jsonOutcome(json: { chunks: Buffer[]; bytes: number; lastNs: number | null }): [RequestStatus, string | null] {
    const r = this.record;
    r.done_ns = json.lastNs;
    if (json.lastNs === null) return ['incomplete_stream', 'the response had no body'];
    if (json.bytes > MAX_JSON_BODY_BYTES) return ['malformed_stream', `the body exceeded ${MAX_JSON_BODY_BYTES} bytes`];
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(json.chunks).toString('utf8'));
    } catch {
      return ['malformed_stream', 'the body was not JSON'];
    }
    const expected = this.adapter.batchSize ?? 1;
    const items = this.adapter.items?.(body) ?? null;
    if (items !== expected) return ['malformed_stream', `the body held ${items ?? 'no'} results for ${expected} inputs`];
    const usage = this.adapter.usage(body);
    r.prompt_tokens = usage.prompt_tokens;
    r.cached_tokens = usage.cached_tokens;
    if (this.requireUsage && r.prompt_tokens === null)
      return ['missing_usage', 'usage was requested but not sent (target.require_usage is true)'];
    return ['ok', null];
  }

  // The tokenizer over the whole streamed text where the agent has one and kept all of it; else
  // the chunk count, an estimate (a chunk may hold several tokens).
  private countWithoutUsage(): void {
    const r = this.record;
    const text = this.capture?.text();
    if (this.countOutput && text?.complete) {
      r.completion_tokens = this.countOutput(text.reasoning) + this.countOutput(text.visible);
      r.output_token_source = 'tokenizer';
      return;
    }
    r.completion_tokens = r.content_chunks + r.reasoning_chunks + (r.tool_call_chunks ?? 0);
    r.output_token_source = 'chunks';
  }

  onError(err: Error): void {
    const code = (err as { code?: string }).code ?? err.name;
    const [status, why] = this.pendingAbort ?? [
      this.record.headers_ns === null ? 'connect_error' : 'incomplete_stream',
      `${code}: ${err.message}`,
    ];
    this.fail(status, why);
  }

  /** Ends the request on purpose (timeout or stop), whatever state undici is in. */
  abort(status: RequestStatus, why: string): void {
    if (this.finished) return;
    this.pendingAbort = [status, why];
    if (this.abortRequest) this.abortRequest(new Error(why));
    else this.fail(status, why);
  }

  /** Ends the request as failed with `status`. */
  fail(status: RequestStatus, error: string): void {
    this.finish(status, error.slice(0, MAX_ERROR_BYTES));
  }

  /** One SSE event's data (the parser's sink). */
  onEvent(data: string): void {
    const t = this.chunkNs;
    const f = classifyEvent(data, this.patterns);
    this.flags |= f;
    const r = this.record;
    if (f & (EventFlag.CONTENT | EventFlag.REASONING)) {
      r.first_output_ns ??= t;
      r.last_token_ns = t;
      this.capture?.add(data);
    }
    if (f & EventFlag.REASONING) r.reasoning_chunks++;
    if (f & EventFlag.CONTENT) {
      if (r.first_content_ns === null) {
        r.first_content_ns = t;
        r.first_content_uncertainty_ns = this.chunkDelayBoundNs;
      }
      r.content_chunks++;
      if (this.lastContentNs !== null) this.gaps.push(t - this.lastContentNs);
      this.lastContentNs = t;
    }
    if (f & EventFlag.TOOL_CALL && this.tools) {
      // A tool call is output like content: it sets first output, and its arguments are captured.
      r.first_output_ns ??= t;
      r.first_tool_call_ns ??= t;
      r.tool_call_chunks = (r.tool_call_chunks ?? 0) + 1;
      r.last_token_ns = t;
      if (!(f & (EventFlag.CONTENT | EventFlag.REASONING))) this.capture?.add(data);
    }
    if (f & EventFlag.TOOL_HEAD && this.tools) this.capture?.add(data);
    if (f & EventFlag.USAGE) this.readUsage(data);
    if (f & EventFlag.DONE) r.done_ns ??= t;
  }

  // A JSON.parse per usage event (one or two a request), after the timestamp is already taken; the
  // adapter knows the usage's shape. Usage is folded: a count an event carries replaces the earlier
  // one, so an API that reports input in its first event and output in a later one is read whole.
  private readUsage(data: string): void {
    try {
      const usage = this.adapter.usage(JSON.parse(data));
      const r = this.record;
      if (usage.prompt_tokens !== null) r.prompt_tokens = usage.prompt_tokens;
      if (usage.completion_tokens !== null) {
        r.completion_tokens = usage.completion_tokens;
        r.output_token_source = 'usage';
      }
      if (usage.cached_tokens !== null) r.cached_tokens = usage.cached_tokens;
    } catch {
      this.flags |= EventFlag.MALFORMED;
    }
  }

  private finish(status: RequestStatus, error: string | null): void {
    if (this.finished) return;
    this.finished = true;
    unwatch(this.signal, this);
    this.record.status = status;
    this.record.error = error;
    if (status !== 'ok') {
      this.record.done_ns ??= this.nowNs();
      this.gaps.release();
    }
    this.onDone({
      record: this.record,
      contentGaps: this.gaps,
      ...(this.captureContent && this.captured()),
    });
  }

  private captured(): Pick<RequestResult, 'content' | 'toolCalls'> {
    const text = this.capture!.text();
    if (!text.toolArguments) return { content: text.visible };
    const toolCalls = text.toolArguments.map((a, i) => ({ ...text.toolHeads![i]!, arguments: a }));
    return { content: text.visible, toolCalls };
  }
}
