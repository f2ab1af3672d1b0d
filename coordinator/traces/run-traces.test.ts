// A run's span receiver keeps counts, not spans: every span of the run goes to spans.ndjson as it
// arrives, and the heap after a full GC stays flat however many arrive.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ROOT_CONTEXT, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import type { Plan } from '../../shared/plan.js';
import { runTraceTag, traceIdOf } from '../../shared/trace-context.js';
import { judgeMemorySlope } from '../../test/hosts/memory-slope.js';
import { RunTraces } from './run-traces.js';

const RUN = '20261205T000000Z-spans-0001';
const PLAN: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'spans',
  seed: 1,
  duration_s: 1,
  traces: { http: '127.0.0.1:0', grpc: '127.0.0.1:0', flush_s: 1 },
  classes: [{ name: 'rt', prompt: {}, load: { model: 'poisson', phases: [] } }],
};

// One export body of `n` vLLM-shaped spans (the official serializer), the first `foreign` of another run.
function exportBody(n: number, foreign: number): Uint8Array {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: new Resource({ 'service.name': 'vllm' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('vllm.llm_engine');
  for (let i = 0; i < n; i++) {
    const tag = i < foreign ? runTraceTag('another-run') : runTraceTag(RUN);
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: traceIdOf(tag, 0, i),
      spanId: '00000000000000' + '01',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const s = tracer.startSpan('llm_request', { kind: SpanKind.SERVER, startTime: 1_796_000_000_000 + i }, parent);
    s.setAttributes({
      'gen_ai.request.id': `chatcmpl-${i}`,
      'gen_ai.latency.time_in_queue': 0.01,
      'gen_ai.latency.time_to_first_token': 0.05,
    });
    s.end(1_796_000_000_100 + i);
  }
  return ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!;
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let traces: RunTraces | undefined;
afterEach(async () => traces?.close());

describe("a run's span receiver", () => {
  it('streams every span of the run to spans.ndjson, counts the rest, and holds no span in memory', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-spans-'));
    traces = await RunTraces.start(PLAN.traces!, RUN, PLAN, dir);
    const url = `http://127.0.0.1:${traces.ports().http}/v1/traces`;
    const body = exportBody(200, 20);
    const points: { requests: number; bytes: number }[] = [];
    const batches = 150;
    for (let b = 0; b < batches; b++) {
      const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/x-protobuf' } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      if (b >= 20 && b % 10 === 0) {
        gc();
        points.push({ requests: b * 200, bytes: process.memoryUsage().heapUsed });
      }
    }
    expect(traces.counts()).toMatchObject({ requests: batches, spans: batches * 200, by_trace_id: batches * 180, foreign: batches * 20 });
    // A receiver that kept each span would retain hundreds of bytes per span; it keeps none.
    const slope = judgeMemorySlope(points, 64);
    expect(slope.pass, JSON.stringify(slope)).toBe(true);
    await traces.drain(0);
    await traces.close();
    const lines = readFileSync(join(dir, 'spans.ndjson'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(batches * 180);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      class: 'rt',
      request_index: 20,
      joined_by: 'trace_id',
      service: 'vllm',
      role: 'aggregate',
      latency_s: { time_in_queue: 0.01 },
    });
  });
});
