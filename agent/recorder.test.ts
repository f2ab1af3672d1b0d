import { describe, expect, it } from 'vitest';
import { decodeHistogram, percentilesNs } from '../shared/histogram.js';
import type { RequestRecord } from '../shared/metrics.js';
import type { IntervalClass } from '../shared/protocol.js';
import { Recorder } from './recorder.js';

const MS = 1_000_000;

function record(over: Partial<RequestRecord>): RequestRecord {
  return {
    class: 'rt',
    request_index: 0,
    status: 'ok',
    http_status: 200,
    intended_ns: 0,
    sent_ns: 1 * MS,
    headers_ns: 5 * MS,
    first_output_ns: 20 * MS,
    first_content_ns: 30 * MS,
    last_token_ns: 90 * MS,
    done_ns: 100 * MS,
    prompt_tokens: 10,
    completion_tokens: 8,
    output_token_source: 'usage',
    cached_tokens: null,
    reasoning_chunks: 1,
    content_chunks: 7,
    canary: null,
    retry_after_s: null,
    dropped_reason: null,
    error: null,
    ...over,
  };
}

describe('Recorder on a fake clock', () => {
  it('records into `all` and the windows a request belongs to by intended time, and into the open second', async () => {
    let now = 0;
    const intervals: [number, Record<string, IntervalClass>][] = [];
    const rec = new Recorder(
      [{ name: 'w', start_s: 1, end_s: 2 }],
      () => now,
      (s, c) => intervals.push([s, c]),
    );
    rec.issued('rt', 1 * MS);
    now = 100 * MS;
    rec.finished(record({}), [10 * MS, 10 * MS]);
    now = 1500 * MS;
    rec.issued('rt', 2 * MS);
    rec.finished(
      record({ intended_ns: 1200 * MS, sent_ns: 1202 * MS, first_output_ns: 1210 * MS, first_content_ns: 1250 * MS, done_ns: 1300 * MS }),
      [],
    );
    rec.finished(record({ status: 'http_error', http_status: 429, intended_ns: 1300 * MS, sent_ns: 1300 * MS, done_ns: 1301 * MS }), []);
    now = 2100 * MS;
    rec.rotate();
    await rec.drained();
    expect(intervals.map(([s]) => s)).toEqual([0, 1]);
    expect(intervals[0]![1].rt).toMatchObject({ issued: 1, completed: 1, failed: 0 });
    expect(intervals[1]![1].rt).toMatchObject({ issued: 1, completed: 1, failed: 1 });
    const run = rec.encodeRun();
    expect(Object.keys(run.rt!)).toEqual(['all', 'w']);
    const ttftAll = decodeHistogram(run.rt!.all!.ttft!);
    expect(ttftAll.totalCount).toBe(2); // the 429 is not in latency distributions
    const ttftW = decodeHistogram(run.rt!.w!.ttft!);
    expect(percentilesNs(ttftW, [0.5])[0]).toBeCloseTo(48 * MS, -5);
    expect(decodeHistogram(run.rt!.all!.schedule_lag!).totalCount).toBe(3); // every dispatched request
    expect(decodeHistogram(run.rt!.all!.itl!).totalCount).toBe(2);
    // tpot = (done − first_output) / (completion_tokens − 1) = 80 ms / 7
    expect(percentilesNs(decodeHistogram(run.rt!.all!.tpot!), [0])[0]! / ((80 * MS) / 7)).toBeCloseTo(1, 3);
  });
});
