// The trace receiver against spans from the OpenTelemetry Python project's own OTLP encoding (the
// protobuf messages and gRPC stub of opentelemetry-proto, what vLLM's exporters send with), over
// OTLP/gRPC and OTLP/HTTP protobuf: every span decoded with vLLM's attributes and journey events.
// Needs the virtual environment of test/otel-py (npm run test:otel-py-deps).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startTraceReceiver, type TraceReceiver } from '../coordinator/traces/receiver.js';
import type { OtlpSpan } from '../coordinator/traces/span.js';

const PYTHON = fileURLToPath(new URL('./otel-py/.venv/bin/python', import.meta.url));
const SCRIPT = fileURLToPath(new URL('./otel-py/emit_spans.py', import.meta.url));
const COUNT = 25;

let receiver: TraceReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function emit(protocol: 'grpc' | 'http/protobuf', endpoint: string): Promise<{ sent: number; trace_ids: string[] }> {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run npm run test:otel-py-deps`);
  const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT, '--protocol', protocol, '--endpoint', endpoint, '--count', String(COUNT)]);
  return JSON.parse(stdout) as { sent: number; trace_ids: string[] };
}

describe('the trace receiver against the OpenTelemetry Python OTLP encoding', () => {
  for (const protocol of ['grpc', 'http/protobuf'] as const) {
    it(`${protocol}: every span decoded, with vLLM's attributes and journey events`, async () => {
      const got: OtlpSpan[] = [];
      receiver = await startTraceReceiver({ host: '127.0.0.1', httpPort: 0, grpcPort: 0, onSpans: (s) => got.push(...s) });
      const endpoint = protocol === 'grpc' ? `http://127.0.0.1:${receiver.grpcPort}` : `http://127.0.0.1:${receiver.httpPort}/v1/traces`;
      const out = await emit(protocol, endpoint);
      expect(out.sent).toBe(COUNT);
      expect(receiver.counts()).toEqual({
        requests: 1,
        spans: COUNT,
        refused: { malformed: 0, too_large: 0, unsupported_media_type: 0, not_found: 0, bad_compression: 0 },
      });
      expect(got.map((s) => s.traceId)).toEqual(out.trace_ids);
      got.forEach((span, i) => {
        expect(span).toMatchObject({
          name: 'llm_request',
          spanId: `5e${i.toString(16).padStart(14, '0')}`,
          parentSpanId: `c1${i.toString(16).padStart(14, '0')}`,
          resource: { 'service.name': 'vllm', 'vllm.process_id': '4242' },
        });
        const queue = 0.01 + i / 1000;
        expect(span.attributes).toEqual({
          'gen_ai.request.id': `cmpl-py-${i}`,
          'gen_ai.response.model': 'Qwen/Qwen3-0.6B',
          'gen_ai.request.max_tokens': 8,
          'gen_ai.usage.prompt_tokens': 512 + i,
          'gen_ai.usage.completion_tokens': 8,
          'gen_ai.latency.time_in_queue': queue,
          'gen_ai.latency.time_to_first_token': queue + 0.03,
          'gen_ai.latency.time_in_model_prefill': 0.03,
          'gen_ai.latency.time_in_model_decode': 0.04,
          'gen_ai.latency.time_in_model_inference': 0.03 + 0.04,
          'gen_ai.latency.e2e': queue + 0.03 + 0.04,
        });
        expect(span.events.map((e) => e.name)).toEqual(['journey.QUEUED', 'journey.SCHEDULED', 'journey.FIRST_TOKEN', 'journey.FINISHED']);
        expect(span.events.map((e) => e.attributes)).toEqual([
          { 'event.type': 'QUEUED' },
          { 'schedule.kind': 'FIRST' },
          { 'decode.done_tokens': 1 },
          { 'finish.status': 'length' },
        ]);
        expect(span.events[0]!.timeUnixNs).toBe(span.startUnixNs);
        expect(span.events[3]!.timeUnixNs).toBe(span.endUnixNs);
      });
    });
  }
});
