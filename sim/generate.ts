// Answers one validated generation request of any API: decides its output, hands it to the
// engine, and has the API's module write each token as the engine emits it (SSE) or the whole
// body at the end, applying the request's fault. The wire is the module's (apis/); the output,
// the timing and the faults are the same for every API.
import type { ServerResponse } from 'node:http';
import type { GenerationRequest, ResponseIdentity, SimStream, ToolCallPart } from './apis/contract.js';
import { CONTENT_TOKEN, REASONING_TOKEN, usageOf } from './apis/contract.js';
import { type FaultKind, faultTokenIndex } from './faults.js';
import type { EngineJob, EngineTicket, JobTrace, SimEngine } from './job.js';
import type { AbortReason, FinishReason } from './metrics.js';
import { fnv1a32 } from './tokenizer.js';

export { CONTENT_TOKEN, REASONING_TOKEN };

/** The event a `malformed` fault inserts: data that is not valid JSON. */
export const MALFORMED_EVENT = 'data: {"choices":[{"delta":{"content":"to\n\n';

/** Everything needed to answer one request. */
export interface GenerationContext {
  res: ServerResponse;
  engine: SimEngine;
  request: GenerationRequest;
  /** Scheduling priority passed to the engine. */
  priority: number;
  /** Prompt block hashes, when the engine caches prefixes. */
  blockHashes: readonly number[] | undefined;
  who: ResponseIdentity;
  fault: FaultKind | undefined;
  reasoningTokens: number;
  stallMs: number;
  /** Present when spans are sent: where the engine notes the request's journey. */
  trace?: JobTrace | undefined;
}

/** Output length: exactly max_tokens with ignore_eos, else a stable "EOS" point from the prompt hash. */
export function outputLength(request: GenerationRequest): number {
  return request.ignoreEos ? request.maxTokens : 1 + (fnv1a32(request.promptText) % request.maxTokens);
}

/** Starts answering; the engine drives the rest. */
export function serveGeneration(ctx: GenerationContext): void {
  const { res, engine, fault } = ctx;
  if (fault === 'hang') {
    hang(ctx);
    return;
  }
  const outputTokens = outputLength(ctx.request);
  const plan: Plan = {
    outputTokens,
    finish: outputTokens === ctx.request.maxTokens ? 'length' : 'stop',
    faultAt: fault === undefined ? -1 : faultTokenIndex(fault, outputTokens),
  };
  let ticket: EngineTicket | undefined;
  let settled = false;
  const end = (reason?: AbortReason): void => {
    settled = true;
    if (reason && ticket) engine.cancel(ticket, reason);
  };
  const job: EngineJob = {
    promptTokens: ctx.request.promptTokens,
    outputTokens,
    finishReason: plan.finish,
    priority: ctx.priority,
    ...(ctx.blockHashes ? { blockHashes: ctx.blockHashes } : {}),
    ...(fault === 'stall' ? { pause: { afterTokens: plan.faultAt, ms: ctx.stallMs } } : {}),
    ...(ctx.trace ? { trace: ctx.trace } : {}),
    ...(ctx.request.stream
      ? streamingCallbacks(ctx, plan, end, () => job.cachedTokens)
      : bufferedCallbacks(ctx, plan, end, () => job.cachedTokens)),
  };
  // A client that leaves (or a socket we reset) frees its slot at once.
  res.on('close', () => {
    if (!settled) end('client_disconnect');
  });
  ticket = engine.submit(job);
}

interface Plan {
  outputTokens: number;
  finish: FinishReason;
  /** Token index at which the fault acts; -1 without one. */
  faultAt: number;
}

type Callbacks = Pick<EngineJob, 'onToken' | 'onFinish'>;
type End = (reason?: AbortReason) => void;

function streamingCallbacks(ctx: GenerationContext, plan: Plan, end: End, cached: () => number | undefined): Callbacks {
  const { res, who, fault, request } = ctx;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  const stream: SimStream = request.api.stream(who, request, (chunk) => res.write(chunk));
  stream.start();
  return {
    onToken(index) {
      if (index === plan.faultAt && fault === 'reset') {
        reset(ctx, end);
        return;
      }
      if (index === plan.faultAt && fault === 'truncate') {
        // Ends cleanly but early: no finish, no usage, no end of stream.
        end('fault');
        res.end();
        return;
      }
      if (request.toolName !== null && stream.toolCall && !isReasoning(ctx, index))
        stream.toolCall(toolCallPart(ctx, index, plan.outputTokens));
      else stream.token(tokenText(ctx, index), isReasoning(ctx, index));
      if (index === plan.faultAt && fault === 'malformed') res.write(MALFORMED_EVENT);
    },
    onFinish() {
      stream.finish(plan.finish, fault === 'no-usage' ? undefined : usageOf(request.promptTokens, plan.outputTokens, cached()));
      res.end();
      end();
    },
  };
}

function bufferedCallbacks(ctx: GenerationContext, plan: Plan, end: End, cached: () => number | undefined): Callbacks {
  const { res, who, fault, request } = ctx;
  const text = { content: '', reasoning: '' };
  const render = (): string => {
    const usage = fault === 'no-usage' ? undefined : usageOf(request.promptTokens, plan.outputTokens, cached());
    const reasoningTokens = request.api.reasoning ? Math.min(ctx.reasoningTokens, plan.outputTokens) : 0;
    return JSON.stringify(request.api.body(who, request, text, { finish: plan.finish, usage, reasoningTokens }));
  };
  return {
    onToken(index) {
      if (index === plan.faultAt && fault === 'reset') {
        reset(ctx, end);
        return;
      }
      if (index === plan.faultAt && fault === 'truncate') {
        // Ends cleanly but early: the first half of a body, sent chunked so the length can't tell.
        end('fault');
        const json = render();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(json.slice(0, Math.floor(json.length / 2)));
        return;
      }
      if (isReasoning(ctx, index)) text.reasoning += REASONING_TOKEN;
      else text.content += tokenText(ctx, index);
    },
    onFinish() {
      // A malformed body is complete on the wire but is not JSON.
      const body = fault === 'malformed' ? `${MALFORMED_EVENT.slice('data: '.length).trim()}${render()}` : render();
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      end();
    },
  };
}

// reset: the socket dies mid-response, so the client sees a connection error rather than an end.
function reset(ctx: GenerationContext, end: End): void {
  end('fault');
  ctx.res.socket?.destroy();
}

// hang: headers, then nothing until the client leaves or the server closes; never occupies a slot.
function hang(ctx: GenerationContext): void {
  ctx.res.writeHead(200, { 'content-type': ctx.request.stream ? 'text/event-stream' : 'application/json' });
  ctx.res.flushHeaders();
}

// A tool call's arguments spread over the answer's tokens, valid JSON once all are out:
// `{"input": "` with the first, `tok ` for each between, `"}` with the last (`{}` for one token).
function toolCallPart(ctx: GenerationContext, index: number, outputTokens: number): ToolCallPart {
  const first = index === firstContentIndex(ctx);
  const last = index === outputTokens - 1;
  const args = first && last ? '{}' : first ? '{"input": "' : last ? '"}' : CONTENT_TOKEN;
  return first ? { name: ctx.request.toolName!, arguments: args, first: index === 0 } : { arguments: args, first: false };
}

function isReasoning(ctx: GenerationContext, index: number): boolean {
  return ctx.request.api.reasoning && index < ctx.reasoningTokens;
}

function firstContentIndex(ctx: GenerationContext): number {
  return ctx.request.api.reasoning ? ctx.reasoningTokens : 0;
}

// The text of token `index`. A prompt that asks to begin the answer with a marker gets it as the
// first content token (one word, so one token); the `canary` fault answers with the next request's
// marker instead, as a cache or routing mix-up would.
function tokenText(ctx: GenerationContext, index: number): string {
  if (isReasoning(ctx, index)) return REASONING_TOKEN;
  const marker = ctx.request.canaryMarker;
  if (marker === null || index !== firstContentIndex(ctx)) return CONTENT_TOKEN;
  return `${ctx.fault === 'canary' ? otherMarker(marker) : marker} `;
}

/** Another request's marker: the trailing number of `marker` plus one, same width. */
export function otherMarker(marker: string): string {
  const m = /^(.*?)(\d+)$/.exec(marker);
  if (!m) return `${marker}X`;
  return m[1]! + String(Number(m[2]) + 1).padStart(m[2]!.length, '0');
}
