// A small OpenAI chat server on loopback that emits vLLM's per-request span (`llm_request`, the
// gen_ai.latency.* attributes in seconds, continuing the request's traceparent) through the official
// OpenTelemetry JS SDK and OTLP exporter, stamped on a clock set `offsetMs` away from the machine's.
// One engine slot: a request waits its turn (its queue), then prefills for `prefillMs`, then streams
// `tokens` tokens `itlMs` apart; every figure in its span is what it measured on its own clock.
// Disaggregated, a "prefill" instance and a "decode" instance each emit their span (service.name
// says which, each on its own clock), the decode one after a KV transfer of `kvMs`. A clock may
// drift (`driftPpm`); a span may end after the response's last write, as an HTTP server span does
// (`spanEnd`); and `replicas` serve round robin under one service.name, each on its own clock with
// its own service.instance.id.
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
  /** The server's clock rate against the machine's (ppm, positive: fast), from the target's start. */
  driftPpm?: number;
  /** 'last-token' (vLLM's llm_request, the default) or 'after-write': once the response's last write has been flushed. */
  spanEnd?: 'last-token' | 'after-write';
  /** Aggregated replicas under service.name 'vllm', round robin, each with its service.instance.id and clock. */
  replicas?: { instanceId: string; offsetMs: number; driftPpm: number }[];
}

const propagator = new W3CTraceContextPropagator();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tracerFor(service: string, o: TracedTargetOptions, instanceId?: string): { tracer: Tracer; provider: BasicTracerProvider } {
  const exporter = o.protocol === 'grpc' ? new GrpcExporter({ url: o.endpoint }) : new ProtoExporter({ url: o.endpoint });
  const provider = new BasicTracerProvider({
    resource: new Resource({ 'service.name': service, ...(instanceId === undefined ? {} : { 'service.instance.id': instanceId }) }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 200 })],
  });
  return { tracer: provider.getTracer('vllm.llm_engine'), provider };
}

/** Starts the target; `stop()` flushes its spans and closes it. */
export async function startTracedTarget(o: TracedTargetOptions): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const clock = anchoredClock();
  const startMs = Number(clock.nowNs()) / 1e6;
  // The machine's clock, ms since the epoch as the SDK takes it; a server's reads `offset` away from
  // it and gains `drift` ppm from the target's start.
  const at = (): number => Number(clock.nowNs()) / 1e6;
  const serverTime = (machineMs: number, offsetMs: number, driftPpm = o.driftPpm ?? 0): number =>
    machineMs + offsetMs + (machineMs - startMs) * driftPpm * 1e-6;
  const d = o.disaggregated;
  const replicas = (o.replicas ?? []).map((r) => ({ ...r, ...tracerFor('vllm', o, r.instanceId) }));
  const instances = d
    ? { prefill: tracerFor('vllm-prefill', o), decode: tracerFor('vllm-decode', o) }
    : { prefill: replicas.length > 0 ? replicas[0]! : tracerFor('vllm', o), decode: null };
  let slot: Promise<void> = Promise.resolve();
  let received = 0;

  const server: Server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url === '/v1/models') return void res.writeHead(200).end('{"data":[]}');
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
    const nth = ++received;
    const own = o.ownTraceEvery !== undefined && nth % o.ownTraceEvery === 0;
    const parentCtx = own
      ? ROOT_CONTEXT
      : propagator.extract(ROOT_CONTEXT, req.headers, { get: (h, k) => h[k] as string | undefined, keys: (h) => Object.keys(h) });
    const requestId = String(req.headers['x-request-id'] ?? '');
    const pOffset = d ? d.prefillOffsetMs : (replicas[nth % Math.max(1, replicas.length)]?.offsetMs ?? o.offsetMs);
    const arrival = at();
    for await (const _ of req);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // One engine slot: wait for the previous request's prefill (the queue), then prefill.
    let release!: () => void;
    const previous = slot;
    slot = new Promise((r) => {
      release = r;
    });
    await previous;
    const scheduled = at();
    await sleep(o.prefillMs);
    const prefilled = at();
    release();
    const chunk = (delta: object, extra: object = {}) =>
      `data: ${JSON.stringify({ id: `chatcmpl-${requestId}`, object: 'chat.completion.chunk', choices: [{ index: 0, delta }], ...extra })}\n\n`;
    const replica = replicas.length > 0 ? replicas[nth % replicas.length]! : null;
    const drift = replica?.driftPpm ?? o.driftPpm ?? 0;
    const span = (tracer: Tracer, offsetMs: number, start: number, firstToken: number, end: number, attrs: Record<string, number>) => {
      // Durations as the server's own (drifting) clock measures them.
      const scaled: Record<string, number> = {};
      for (const [k, v] of Object.entries(attrs)) scaled[k] = v * (1 + drift * 1e-6);
      const s = tracer.startSpan('llm_request', { kind: SpanKind.SERVER, startTime: serverTime(start, offsetMs, drift) }, parentCtx);
      s.setAttributes({ 'gen_ai.request.id': `chatcmpl-${requestId}`, ...scaled });
      s.addEvent('first_token', {}, serverTime(firstToken, offsetMs, drift));
      s.end(serverTime(end, offsetMs, drift));
    };
    let decodeStart = prefilled;
    if (d) {
      // The prefill instance's own first token ends its part; the KV cache then moves to the decode instance.
      span(instances.prefill.tracer, pOffset, arrival, prefilled, prefilled, {
        'gen_ai.latency.time_in_queue': (scheduled - arrival) / 1e3,
        'gen_ai.latency.time_in_model_prefill': (prefilled - scheduled) / 1e3,
        'gen_ai.latency.time_to_first_token': (prefilled - arrival) / 1e3,
      });
      decodeStart = at();
      await sleep(d.kvMs);
    }
    const firstToken = at();
    res.write(chunk({ role: 'assistant', content: 'tok' }));
    for (let i = 1; i < o.tokens; i++) {
      await sleep(o.itlMs);
      res.write(chunk({ content: ' tok' }));
    }
    const lastToken = at();
    res.write(chunk({}, { usage: { prompt_tokens: 10, completion_tokens: o.tokens, total_tokens: 10 + o.tokens } }));
    // An HTTP server span ends once the response's last write has been handed to the socket and flushed.
    const flushed = new Promise<void>((r) => res.end('data: [DONE]\n\n', () => r()));
    if (o.spanEnd === 'after-write') await flushed;
    const end = o.spanEnd === 'after-write' ? at() : lastToken;
    if (d && instances.decode)
      span(instances.decode.tracer, d.decodeOffsetMs, decodeStart, firstToken, end, {
        'gen_ai.latency.time_in_queue': 0,
        'gen_ai.latency.kv_transfer': (firstToken - decodeStart) / 1e3,
        'gen_ai.latency.time_to_first_token': (firstToken - decodeStart) / 1e3,
        'gen_ai.latency.time_in_model_decode': (end - firstToken) / 1e3,
      });
    else
      span((replica ?? instances.prefill).tracer, pOffset, arrival, firstToken, end, {
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
      await Promise.all(
        [...new Set([instances.prefill.provider, instances.decode?.provider, ...replicas.map((r) => r.provider)])].map((p) =>
          p?.shutdown(),
        ),
      );
    },
  };
}
