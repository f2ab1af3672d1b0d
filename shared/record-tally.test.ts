import { describe, expect, it } from 'vitest';
import type { RequestRecord } from './metrics.js';
import { mergeTallies, RecordTally } from './record-tally.js';

function rec(i: number, status: RequestRecord['status'], ttftMs: number): RequestRecord {
  const sent = i * 1e9;
  return {
    class: 'c',
    request_index: i,
    status,
    http_status: status === 'ok' ? 200 : 429,
    intended_ns: sent,
    sent_ns: sent,
    headers_ns: sent + 1e6,
    first_output_ns: status === 'ok' ? sent + ttftMs * 1e6 : null,
    first_content_ns: status === 'ok' ? sent + ttftMs * 1e6 : null,
    last_token_ns: null,
    done_ns: sent + 500e6,
    prompt_tokens: 10,
    completion_tokens: status === 'ok' ? 4 : null,
    output_token_source: status === 'ok' ? 'usage' : null,
    cached_tokens: null,
    reasoning_chunks: 0,
    content_chunks: 4,
    canary: null,
    retry_after_s: null,
    dropped_reason: null,
    error: null,
  };
}

describe('RecordTally', () => {
  it('counts outcomes, SLO hits and goodput, and two tallies add to the tally of both', () => {
    const slo = { ttft_p95_ms: 100 };
    const a = new RecordTally(0, 2e9, slo);
    const b = new RecordTally(0, 2e9, slo);
    const both = new RecordTally(0, 2e9, slo);
    const records = [rec(0, 'ok', 50), rec(1, 'ok', 150), rec(2, 'http_error', 0), rec(3, 'ok', 20)];
    records.forEach((r, i) => {
      (i % 2 === 0 ? a : b).add(r);
      both.add(r);
    });
    // By hand: 4 requests, 3 ok, 1 failed (429); hits: #0 (50 ms) and #3 (20 ms); inside [0, 2 s): #0 and #1 finished.
    expect(both).toMatchObject({
      requests: 4,
      completed: 3,
      failed: 1,
      dispatched: 4,
      http429: 1,
      sloHits: 2,
      goodInside: 1,
      finishedInside: 2,
    });
    expect(both.lastDoneNs).toBe(3.5e9);
    const merged = mergeTallies([{ c: { all: a.data() } }, { c: { all: b.data() } }]);
    expect(merged.c!.all).toEqual(both.data());
  });
});
