// A small OpenAI chat server on loopback that emits vLLM's per-request span (`llm_request`, the
// gen_ai.latency.* attributes in seconds, continuing the request's traceparent) through the official
// OpenTelemetry JS SDK and OTLP exporter, stamped on a clock set `offsetMs` away from the machine's.
// One engine slot: a request waits its turn (its queue), then prefills for `prefillMs`, then streams
// `tokens` tokens `itlMs` apart; every figure in its span is what it measured on its own clock.
// Disaggregated, a "prefill" instance and a "decode" instance each emit their span (service.name
// says which, each on its own clock), the decode one after a KV transfer of `kvMs`.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type Tracer } from '@opentelemetry/sdk-trace-base';
import { anchoredClock } from '../shared/clock.js';

export interface TracedTargetOptions {
  /** OTLP endpoint: http://host:port/v1/traces (protocol 'http') or http://host:port (protocol 'grpc'). */
  endpoint: string;
  protocol: 'http' | 'grpc';
  prefillMs: number;
  itlMs: number;
  tokens: number;
  /** Aggregated serving: the server's clock offset from the machine's (ms). */
  offsetMs: number;
  /** Every n-th request's span starts a trace of its own, as from a server that does not propagate context. */
  ownTraceEvery?: number;
  /** Disaggregated serving: each instance's clock offset and the KV transfer between them. */
  disaggregated?: { prefillOffsetMs: number; decodeOffsetMs: number; kvMs: number };
}

const propagator = new W3CTraceContextPropagator();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tracerFor(service: string, o: TracedTargetOptions): { tracer: Tracer; provider: BasicTracerProvider } {
  const exporter = o.protocol === 'grpc' ? new GrpcExporter({ url: o.endpoint }) : new ProtoExporter({ url: o.endpoint });
  const provider = new BasicTracerProvider({
    resource: new Resource({ 'service.name': service }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 200 })],
  });
  return { tracer: provider.getTracer('vllm.llm_engine'), provider };
}

/** Starts the target; `stop()` flushes its spans and closes it. */
export async function startTracedTarget(o: TracedTargetOptions): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const clock = anchoredClock();
  // The server's own wall clock, ms since the epoch as the SDK takes it, set `offset` away.
  const at = (offsetMs: number): number => Number(clock.nowNs()) / 1e6 + offsetMs;
  const d = o.disaggregated;
  const instances = d
    ? { prefill: tracerFor('vllm-prefill', o), decode: tracerFor('vllm-decode', o) }
    : { prefill: tracerFor('vllm', o), decode: null };
  let slot: Promise<void> = Promise.resolve();
  let received = 0;

  const server: Server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url === '/v1/models') return void res.writeHead(200).end('{"data":[]}');
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
    received++;
    const own = o.ownTraceEvery !== undefined && received % o.ownTraceEvery === 0;
    const parentCtx = own
      ? ROOT_CONTEXT
      : propagator.extract(ROOT_CONTEXT, req.headers, { get: (h, k) => h[k] as string | undefined, keys: (h) => Object.keys(h) });
    const requestId = String(req.headers['x-request-id'] ?? '');
    const pOffset = d ? d.prefillOffsetMs : o.offsetMs;
    const arrival = at(0);
    for await (const _ of req);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // One engine slot: wait for the previous request's prefill (the queue), then prefill.
    let release!: () => void;
    const previous = slot;
    slot = new Promise((r) => {
      release = r;
    });
    await previous;
    const scheduled = at(0);
    await sleep(o.prefillMs);
    const prefilled = at(0);
    release();
    const chunk = (delta: object, extra: object = {}) =>
      `data: ${JSON.stringify({ id: `chatcmpl-${requestId}`, object: 'chat.completion.chunk', choices: [{ index: 0, delta }], ...extra })}\n\n`;
    const span = (tracer: Tracer, offsetMs: number, start: number, firstToken: number, end: number, attrs: Record<string, number>) => {
      const s = tracer.startSpan('llm_request', { kind: SpanKind.SERVER, startTime: start + offsetMs }, parentCtx);
      s.setAttributes({ 'gen_ai.request.id': `chatcmpl-${requestId}`, ...attrs });
      s.addEvent('first_token', {}, firstToken + offsetMs);
      s.end(end + offsetMs);
    };
    let decodeStart = prefilled;
    if (d) {
      // The prefill instance's own first token ends its part; the KV cache then moves to the decode instance.
      span(instances.prefill.tracer, pOffset, arrival, prefilled, prefilled, {
        'gen_ai.latency.time_in_queue': (scheduled - arrival) / 1e3,
        'gen_ai.latency.time_in_model_prefill': (prefilled - scheduled) / 1e3,
        'gen_ai.latency.time_to_first_token': (prefilled - arrival) / 1e3,
      });
      decodeStart = at(0);
      await sleep(d.kvMs);
    }
    const firstToken = at(0);
    res.write(chunk({ role: 'assistant', content: 'tok' }));
    for (let i = 1; i < o.tokens; i++) {
      await sleep(o.itlMs);
      res.write(chunk({ content: ' tok' }));
    }
    const end = at(0);
    res.write(chunk({}, { usage: { prompt_tokens: 10, completion_tokens: o.tokens, total_tokens: 10 + o.tokens } }));
    res.end('data: [DONE]\n\n');
    if (d && instances.decode)
      span(instances.decode.tracer, d.decodeOffsetMs, decodeStart, firstToken, end, {
        'gen_ai.latency.time_in_queue': 0,
        'gen_ai.latency.kv_transfer': (firstToken - decodeStart) / 1e3,
        'gen_ai.latency.time_to_first_token': (firstToken - decodeStart) / 1e3,
        'gen_ai.latency.time_in_model_decode': (end - firstToken) / 1e3,
      });
    else
      span(instances.prefill.tracer, pOffset, arrival, firstToken, end, {
        'gen_ai.latency.time_in_queue': (scheduled - arrival) / 1e3,
        'gen_ai.latency.time_in_model_prefill': (prefilled - scheduled) / 1e3,
        'gen_ai.latency.time_to_first_token': (firstToken - arrival) / 1e3,
        'gen_ai.latency.time_in_model_decode': (end - firstToken) / 1e3,
        'gen_ai.latency.e2e': (end - arrival) / 1e3,
      });
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await Promise.all([instances.prefill.provider.shutdown(), instances.decode?.provider.shutdown()]);
    },
  };
}
