import { describe, expect, it } from 'vitest';
import { runTraceTag, traceIdOf } from '../../shared/trace-context.js';
import { SpanTable } from './span-table.js';

const TAG = runTraceTag('run');
const O = 1_796_000_000_000_000_000n;

describe('the end-of-run span table', () => {
  it('gives back each request its spans in timeline order, and how each joined', () => {
    const t = new SpanTable(TAG, O);
    const base = { classIndex: 1, requestIndex: 7, joinedBy: 'trace_id', traceId: traceIdOf(TAG, 1, 7), firstTokenNs: null };
    // The decode instance's span arrives first; the table orders them as the request lived them.
    t.add({
      ...base,
      service: 'd',
      clock: 'd',
      role: 'decode',
      startNs: O + 50n,
      endNs: O + 900n,
      latency: { kv_transfer: 0.015, other: 3 },
    });
    t.add({
      ...base,
      service: 'p',
      clock: 'p@host-a',
      role: 'prefill',
      startNs: O - 120n,
      endNs: O + 40n,
      firstTokenNs: O + 39n,
      latency: { time_in_queue: 0.001 },
    });
    for (let i = 0; i < 3000; i++)
      t.add({
        ...base,
        classIndex: 0,
        requestIndex: i,
        traceId: traceIdOf(TAG, 0, i),
        service: 'p',
        clock: 'p@host-a',
        role: 'aggregate',
        startNs: O + BigInt(i),
        endNs: O + BigInt(i + 5),
        latency: {},
      });
    t.add({
      ...base,
      classIndex: 0,
      requestIndex: 5000,
      joinedBy: 'request_id',
      traceId: 'f'.repeat(32),
      service: 'p',
      clock: 'p@host-a',
      role: 'aggregate',
      startNs: O,
      endNs: O,
      latency: {},
    });
    expect(t.get(1, 7)).toEqual({
      by: 'trace_id',
      traceId: traceIdOf(TAG, 1, 7),
      spans: [
        {
          service: 'p',
          clock: 'p@host-a',
          role: 'prefill',
          startNs: O - 120n,
          endNs: O + 40n,
          firstTokenNs: O + 39n,
          latency: { time_in_queue: 0.001 },
        },
        {
          service: 'd',
          clock: 'd',
          role: 'decode',
          startNs: O + 50n,
          endNs: O + 900n,
          firstTokenNs: null,
          latency: { kv_transfer: 0.015 },
        },
      ],
    });
    expect(t.get(0, 2999)?.spans[0]).toMatchObject({ startNs: O + 2999n, endNs: O + 3004n });
    expect(t.get(0, 5000)).toMatchObject({ by: 'request_id', traceId: 'f'.repeat(32) });
    expect(t.get(0, 3000)).toBeUndefined();
    expect(t.get(2, 0)).toBeUndefined();
  });
});
