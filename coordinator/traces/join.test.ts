import { describe, expect, it } from 'vitest';
import { requestId } from '../../shared/prompt-text.js';
import { runTraceTag, traceIdOf } from '../../shared/trace-context.js';
import { breakdown, matchSpan, type RequestSpan, spanRole } from './join.js';
import type { OtlpSpan } from './span.js';

const RUN = '20261204T233000Z-spans-ab12';
const TAG = runTraceTag(RUN);
const CLASSES = ['rt', 'rt-2'];

const span = (traceId: string, attributes: OtlpSpan['attributes'] = {}, resource: OtlpSpan['resource'] = {}): OtlpSpan => ({
  traceId,
  spanId: '0102030405060708',
  parentSpanId: '',
  name: 'llm_request',
  startUnixNs: 0n,
  endUnixNs: 0n,
  attributes,
  events: [],
  resource,
});

describe('a server span joined to its request', () => {
  it('by the trace id the request carried, else by the request id the server recorded', () => {
    expect(matchSpan(span(traceIdOf(TAG, 1, 42)), TAG, RUN, CLASSES)).toEqual({ classIndex: 1, requestIndex: 42, by: 'trace_id' });
    // A server that started its own trace but kept x-request-id inside its request id (vLLM: chatcmpl-…).
    const other = 'ffffffffffffffffffffffffffffffff';
    const byId = span(other, { 'gen_ai.request.id': `chatcmpl-${requestId(RUN, 'rt-2', 7)}` });
    expect(matchSpan(byId, TAG, RUN, CLASSES)).toEqual({ classIndex: 1, requestIndex: 7, by: 'request_id' });
    expect(matchSpan(span(other, { 'gen_ai.request.id': requestId(RUN, 'rt', 3) }), TAG, RUN, CLASSES)).toMatchObject({
      classIndex: 0,
      requestIndex: 3,
    });
    // Another run's request, or a span naming none.
    expect(matchSpan(span(traceIdOf(runTraceTag('other-run'), 0, 1)), TAG, RUN, CLASSES)).toBeNull();
    expect(matchSpan(span(other, { 'gen_ai.request.id': requestId('other-run', 'rt', 3) }), TAG, RUN, CLASSES)).toBeNull();
  });

  it('tells a prefill from a decode instance by a role attribute or its service name', () => {
    expect(spanRole({ attributes: {}, resource: { 'service.name': 'vllm-prefill-0' } })).toBe('prefill');
    expect(spanRole({ attributes: { 'gen_ai.disaggregation.role': 'decode' }, resource: { 'service.name': 'vllm' } })).toBe('decode');
    expect(spanRole({ attributes: { 'kv_transfer.role': 'kv_producer' }, resource: { 'service.name': 'engine-sim' } })).toBe('prefill');
    expect(spanRole({ attributes: { 'kv_transfer.role': 'kv_consumer' }, resource: { 'service.name': 'engine-sim' } })).toBe('decode');
    expect(spanRole({ attributes: {}, resource: { 'service.name': 'vllm' } })).toBe('aggregate');
  });

  it("breaks the TTFT down into parts that add up to it; only the network's split needs the offset", () => {
    const ms = (x: number) => BigInt(Math.round(x * 1e6));
    // Sent at 0, the server (clock 5 s ahead) starts at 3 ms, queues 40, prefills 20, first token at 63.5, client reads it at 65.
    const s: RequestSpan = {
      service: 'vllm',
      clock: 'vllm',
      role: 'aggregate',
      startNs: ms(5003),
      endNs: ms(5200),
      latency: { time_in_queue: 0.04, time_in_model_prefill: 0.02, time_to_first_token: 0.0605, time_in_model_decode: 0.1365 },
      firstTokenNs: null,
    };
    const client = { sentNs: 0n, firstContentNs: ms(65) };
    const b = breakdown(client, [s], () => 5e9)!;
    expect(b).toMatchObject({
      ttft_ms: 65,
      to_server_ms: 3,
      queue_ms: 40,
      prefill_ms: 20,
      unaccounted_ms: 0.5,
      from_server_ms: 1.5,
      network_ms: 4.5,
    });
    expect(b.to_server_ms! + b.queue_ms! + b.prefill_ms! + b.unaccounted_ms! + b.from_server_ms!).toBeCloseTo(b.ttft_ms, 6);
    // Without a fitted offset the network is still known as a whole.
    expect(breakdown(client, [s], () => null)).toMatchObject({ to_server_ms: null, from_server_ms: null, network_ms: 4.5 });
  });
});
