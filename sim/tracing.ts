// Sends each finished request's spans (journey.ts) through the official OpenTelemetry JS SDK, as
// vLLM does with `--otlp-traces-endpoint`: a BatchSpanProcessor in front of the OTLP exporter the
// protocol names (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: `grpc`, vLLM's default; `http/protobuf`;
// also `http/json`). This module and the SDK are loaded only when the flag is given, and spans are
// built after a response is over, never on the engine's timing path.
import { performance } from 'node:perf_hooks';
import { type Context, type HrTime, ROOT_CONTEXT, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { type ParentContext, type RequestRecord, spansOf } from './journey.js';
import { SimOptionsError } from './options.js';

/** The protocols an endpoint may be spoken to in. */
export const OTLP_PROTOCOLS = ['grpc', 'http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** Where finished requests go to become spans. */
export interface SpanSink {
  /** Builds and queues the spans of one finished request. */
  emit(record: RequestRecord): void;
  /** Sends every queued span, then stops. */
  shutdown(): Promise<void>;
}

/** The protocol OTEL_EXPORTER_OTLP_TRACES_PROTOCOL names (grpc when unset, as in vLLM); SimOptionsError for another. */
export function tracesProtocol(env: NodeJS.ProcessEnv = process.env): OtlpProtocol {
  const value = env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']?.trim() || 'grpc';
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(value))
    throw new SimOptionsError([`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: expected one of ${OTLP_PROTOCOLS.join(', ')}, got ${value}`]);
  return value as OtlpProtocol;
}

/** The exporter's URL: gRPC takes the endpoint as it is; over HTTP a bare origin gets the OTLP path /v1/traces. */
export function exporterUrl(endpoint: string, protocol: OtlpProtocol): string {
  if (protocol === 'grpc') return endpoint;
  const url = new URL(endpoint);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  return url.toString();
}

async function exporterFor(url: string, protocol: OtlpProtocol): Promise<SpanExporter> {
  // Only the exporter in use is loaded: the gRPC one brings @grpc/grpc-js with it.
  if (protocol === 'grpc') return new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter({ url });
  if (protocol === 'http/protobuf') return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter({ url });
  return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({ url });
}

// The engines stamp monotonic seconds (performance.now() / 1000); a span's times are the wall clock
// the same way the SDK reads it, performance.timeOrigin + performance.now(). The origin's whole
// seconds are set apart so the sum keeps nanoseconds (a double of Unix milliseconds keeps ~0.2 µs).
const ORIGIN_S = Math.floor(performance.timeOrigin / 1000);
const ORIGIN_REST_NS = (performance.timeOrigin - ORIGIN_S * 1000) * 1e6;

function wallTime(monotonicS: number): HrTime {
  const ns = Math.round(ORIGIN_REST_NS + monotonicS * 1e9);
  const whole = Math.floor(ns / 1e9);
  return [ORIGIN_S + whole, ns - whole * 1e9];
}

function parentOf(parent: ParentContext | undefined): Context {
  if (!parent) return ROOT_CONTEXT;
  const flags = parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: parent.traceId, spanId: parent.spanId, traceFlags: flags, isRemote: true });
}

/** Starts the SDK for `endpoint`; the protocol comes from the environment (tracesProtocol). */
export async function startTracing(endpoint: string, protocol: OtlpProtocol = tracesProtocol()): Promise<SpanSink> {
  const exporter = await exporterFor(exporterUrl(endpoint, protocol), protocol);
  const provider = new BasicTracerProvider({
    resource: new Resource({ 'service.name': process.env['OTEL_SERVICE_NAME'] || 'engine-sim', 'process.pid': process.pid }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('engine-sim');
  return {
    emit(record) {
      const context = parentOf(record.parent);
      for (const data of spansOf(record)) {
        const span = tracer.startSpan(data.name, { kind: SpanKind.SERVER, startTime: wallTime(data.startS) }, context);
        span.setAttributes(data.attributes);
        for (const e of data.events) span.addEvent(e.name, e.attributes, wallTime(e.atS));
        span.end(wallTime(data.endS));
      }
    },
    shutdown: () => provider.shutdown(),
  };
}
