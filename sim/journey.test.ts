import { describe, expect, it } from 'vitest';
import { VirtualClock } from './clock.js';
import { DisaggregatedPair } from './disaggregated.js';
import { Engine } from './engine.js';
import type { EngineJob, JobTrace } from './job.js';
import { parseTraceparent, type RequestRecord, type SpanData, spansOf } from './journey.js';
import { SimMetrics } from './metrics.js';
import type { EngineProfile } from './profile.js';
import type { ReplicaConfig } from './vllm-core.js';
import { VllmEngine } from './vllm-engine.js';

// Round numbers so expected times are exact: 1 ms per step, 10 µs per prefill token.
const PROFILE: EngineProfile = {
  stepOverheadS: 0.001,
  perDecodeSeqS: 0,
  perPrefillTokenS: 0.00001,
  perPrefillPairS: 0,
  kvCacheTokens: 1e6,
};
const CONFIG: ReplicaConfig = {
  maxNumSeqs: 8,
  maxNumBatchedTokens: 4096,
  kvCacheTokens: 1e6,
  prefixCaching: false,
  scheduling: 'fcfs',
  profile: PROFILE,
};

const replica = (clock: VirtualClock, overrides: Partial<ReplicaConfig> = {}) =>
  new VllmEngine({ ...CONFIG, ...overrides }, new SimMetrics('m', 0), clock);

function traced(clock: VirtualClock, promptTokens: number, outputTokens: number) {
  const trace: JobTrace = { journey: [] };
  const tokens: number[] = [];
  const job: EngineJob = {
    promptTokens,
    outputTokens,
    finishReason: 'length',
    trace,
    onToken: () => tokens.push(clock.nowS()),
    onFinish: () => {},
  };
  return { job, trace, tokens };
}

function record(trace: JobTrace, arrivalS: number, promptTokens: number, completionTokens: number): RequestRecord {
  return {
    parent: undefined,
    requestId: 'req-1',
    responseId: 'chatcmpl-sim000001',
    model: 'm',
    promptTokens,
    completionTokens,
    maxTokens: completionTokens,
    finishReason: 'length',
    arrivalS,
    trace,
  };
}

const attr = (span: SpanData, name: string): number => span.attributes[`gen_ai.latency.${name}`] as number;

describe('traceparent', () => {
  it('reads the trace id, the parent span id and the sampled flag; refuses what is not W3C trace context', () => {
    expect(parseTraceparent('00-6c6f616466660001000000000000002a-000100000000002b-01')).toEqual({
      traceId: '6c6f616466660001000000000000002a',
      spanId: '000100000000002b',
      sampled: true,
    });
    expect(parseTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00')?.sampled).toBe(false);
    // A later version may carry more fields; version 00 may not.
    expect(parseTraceparent('01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-xyz')?.spanId).toBe('b7ad6b7169203331');
    for (const bad of [
      undefined,
      '',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-xyz',
      'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
      '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01',
    ])
      expect(parseTraceparent(bad)).toBeUndefined();
  });
});

describe("the vLLM replica's journey and span", () => {
  it("one request alone: vLLM's formulas on the engine's own times, queue + prefill = TTFT, e2e = the span", () => {
    const clock = new VirtualClock();
    const a = traced(clock, 1000, 5);
    replica(clock).submit(a.job);
    clock.run();
    expect(a.trace.journey.map((e) => [e.type, e.atS, e.kind])).toEqual([
      ['QUEUED', 0, undefined],
      ['SCHEDULED', 0, 'FIRST'],
      ['FIRST_TOKEN', a.tokens[0], undefined],
      ['FINISHED', a.tokens[4], undefined],
    ]);
    const [span] = spansOf(record(a.trace, 0, 1000, 5));
    expect(span).toBeDefined();
    expect(attr(span!, 'time_to_first_token')).toBeCloseTo(0.001 + 1000 * 0.00001, 12);
    expect(attr(span!, 'time_in_queue') + attr(span!, 'time_in_model_prefill')).toBeCloseTo(attr(span!, 'time_to_first_token'), 12);
    expect(attr(span!, 'time_in_model_decode')).toBeCloseTo(4 * 0.001, 12);
    expect(attr(span!, 'time_in_model_inference')).toBeCloseTo(
      attr(span!, 'time_in_model_prefill') + attr(span!, 'time_in_model_decode'),
      12,
    );
    expect(attr(span!, 'e2e')).toBeCloseTo(span!.endS - span!.startS, 12);
    expect(span!.events.map((e) => e.name)).toEqual(['journey.QUEUED', 'journey.SCHEDULED', 'journey.FIRST_TOKEN', 'journey.FINISHED']);
    expect(span!.events.at(-1)!.attributes).toMatchObject({ 'finish.status': 'length', phase: 'DECODE', 'decode.done_tokens': 5 });
  });

  it('a request that waits for a slot: its time in queue is the wait, and TTFT still splits into queue + prefill', () => {
    const clock = new VirtualClock();
    const engine = replica(clock, { maxNumSeqs: 1 });
    const first = traced(clock, 100, 3);
    const second = traced(clock, 100, 3);
    engine.submit(first.job);
    engine.submit(second.job);
    clock.run();
    const [span] = spansOf(record(second.trace, 0, 100, 3));
    expect(attr(span!, 'time_in_queue')).toBeCloseTo(first.tokens[2]!, 12);
    expect(attr(span!, 'time_in_queue') + attr(span!, 'time_in_model_prefill')).toBeCloseTo(attr(span!, 'time_to_first_token'), 12);
  });

  it('a preempted request has PREEMPTED then a SCHEDULED of kind RESUME, counted on the later events', () => {
    const clock = new VirtualClock();
    // Four 16-token blocks: two 32-token prompts fill the cache, so the first decode must preempt the newest.
    const engine = replica(clock, { kvCacheTokens: 64 });
    const older = traced(clock, 32, 4);
    const newer = traced(clock, 32, 4);
    engine.submit(older.job);
    engine.submit(newer.job);
    clock.run();
    // Its prefill ends with its first token; the next step needs a block for its decode, and there is none.
    expect(newer.trace.journey.map((e) => e.type)).toEqual(['QUEUED', 'SCHEDULED', 'FIRST_TOKEN', 'PREEMPTED', 'SCHEDULED', 'FINISHED']);
    expect(newer.trace.journey.filter((e) => e.type === 'SCHEDULED').map((e) => e.kind)).toEqual(['FIRST', 'RESUME']);
    const [span] = spansOf(record(newer.trace, 0, 32, 4));
    expect(span!.events.map((e) => e.attributes['num_preemptions'])).toEqual([0, 0, 0, 1, 1, 1]);
    expect(span!.events[3]!.attributes).toMatchObject({ 'prefill.done_tokens': 32, 'decode.done_tokens': 1 });
    // vLLM's time in queue runs to the first scheduling; the wait after the preemption is decode time.
    expect(attr(span!, 'time_in_queue')).toBe(0);
    expect(attr(span!, 'time_in_model_decode')).toBeGreaterThan(3 * 0.001);
    expect(older.trace.journey.some((e) => e.type === 'PREEMPTED')).toBe(false);
  });

  it('a request that never finished has no span', () => {
    const clock = new VirtualClock();
    const engine = replica(clock);
    const a = traced(clock, 100, 50);
    const ticket = engine.submit(a.job);
    clock.run(0.005);
    engine.cancel(ticket, 'client_disconnect');
    expect(spansOf(record(a.trace, 0, 100, 50))).toEqual([]);
  });
});

describe("the simple engine's journey", () => {
  it('stamps the same events on the wall clock, so its span has the same shape', async () => {
    const engine = new Engine({ ttftMs: 3, itlMs: 1, prefillUsPerToken: 0, maxConcurrency: 4 }, new SimMetrics('m', 0));
    const clock = new VirtualClock(); // only for the helper's token times, which this test does not read
    const a = traced(clock, 100, 3);
    const finished = new Promise<void>((resolve) => {
      a.job.onFinish = resolve;
    });
    engine.submit(a.job);
    await finished;
    expect(a.trace.journey.map((e) => e.type)).toEqual(['QUEUED', 'SCHEDULED', 'FIRST_TOKEN', 'FINISHED']);
    const [span] = spansOf(record(a.trace, a.trace.journey[0]!.atS, 100, 3));
    expect(attr(span!, 'time_to_first_token')).toBeGreaterThanOrEqual(0.003 - 1e-4);
    expect(attr(span!, 'time_in_queue') + attr(span!, 'time_in_model_prefill')).toBeCloseTo(attr(span!, 'time_to_first_token'), 12);
    expect(span!.endS - span!.startS).toBeCloseTo(attr(span!, 'e2e'), 12);
  });
});

describe('disaggregated prefill and decode', () => {
  it('prefill replica, a stated KV transfer, then the decode replica: two spans whose times add up', () => {
    const clock = new VirtualClock();
    const pair = new DisaggregatedPair(replica(clock), replica(clock), clock, { fixedS: 0.02, perTokenS: 0.000001 });
    const a = traced(clock, 1000, 5);
    pair.submit(a.job);
    clock.run();
    const spans = spansOf(record(a.trace, 0, 1000, 5));
    expect(spans.map((s) => s.attributes['kv_transfer.role'])).toEqual(['kv_producer', 'kv_consumer']);
    const [prefill, decode] = spans as [SpanData, SpanData];
    // The prefill replica computes the whole prompt and answers one token.
    expect(attr(prefill, 'time_to_first_token')).toBeCloseTo(0.001 + 1000 * 0.00001, 12);
    expect(prefill.attributes['gen_ai.usage.completion_tokens']).toBe(1);
    // The decode replica takes the request when the prefill ends, waits for its KV, recomputes one token.
    const transferS = 0.02 + 1000 * 0.000001;
    expect(decode.startS).toBe(prefill.endS);
    expect(decode.attributes['gen_ai.latency.kv_transfer']).toBeCloseTo(transferS, 12);
    expect(attr(decode, 'time_in_queue')).toBeCloseTo(transferS, 12);
    expect(attr(decode, 'time_in_model_prefill')).toBeCloseTo(0.001 + 1 * 0.00001, 12);
    expect(attr(decode, 'time_in_queue') + attr(decode, 'time_in_model_prefill')).toBeCloseTo(attr(decode, 'time_to_first_token'), 12);
    // The client's first token is the decode replica's: prefill + transfer + one step.
    expect(a.tokens[0]).toBeCloseTo(prefill.endS + transferS + 0.001 + 0.00001, 12);
    expect(decode.endS).toBe(a.tokens[4]);
  });

  it('a request cancelled during its KV transfer never reaches the decode replica', () => {
    const clock = new VirtualClock();
    const decode = replica(clock);
    const pair = new DisaggregatedPair(replica(clock), decode, clock, { fixedS: 0.05, perTokenS: 0 });
    const a = traced(clock, 100, 5);
    const ticket = pair.submit(a.job);
    clock.run(0.01);
    expect(ticket.state).toBe('running');
    pair.cancel(ticket, 'client_disconnect');
    clock.run();
    expect([ticket.state, a.tokens.length, decode.waitingCount + decode.runningCount]).toEqual(['cancelled', 0, 0]);
  });
});
