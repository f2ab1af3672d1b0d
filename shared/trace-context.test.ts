import { describe, expect, it } from 'vitest';
import { requestOfTraceId, runTraceTag, traceIdOf, traceparentOf } from './trace-context.js';

describe('trace context per request', () => {
  it('a traceparent the W3C grammar accepts, whose trace id names the request back', () => {
    const tag = runTraceTag('20261204T201710Z-lora-30f1');
    expect(tag).toMatch(/^[0-9a-f]{12}$/);
    for (const [c, i] of [
      [0, 0],
      [1, 42],
      [65535, 2 ** 48 - 2],
    ] as const) {
      const tp = traceparentOf(tag, c, i);
      // version-traceid-parentid-flags, lowercase hex, neither id all zeros (W3C Trace Context §3.2).
      expect(tp).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      const [, trace, parent] = tp.split('-');
      expect(trace).not.toMatch(/^0+$/);
      expect(parent).not.toMatch(/^0+$/);
      expect(requestOfTraceId(tag, trace!)).toEqual({ classIndex: c, requestIndex: i });
    }
  });

  it('another run’s trace is not this run’s', () => {
    const mine = runTraceTag('run-a');
    const theirs = traceIdOf(runTraceTag('run-b'), 0, 7);
    expect(requestOfTraceId(mine, theirs)).toBeNull();
    expect(requestOfTraceId(mine, 'short')).toBeNull();
  });
});
