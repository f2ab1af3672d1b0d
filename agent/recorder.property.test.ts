// Property: however an agent's requests fall across seconds (and however the encoding of closed
// seconds interleaves with new records, which reuse the encoded histograms), the per-second
// intervals it emits add up exactly to its run histograms: every second once and in order, every
// finished request's latencies in exactly one interval, counts summing to what was issued and finished.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Histogram } from '../shared/histogram.js';
import { addEncoded, newHistogram, percentilesNs } from '../shared/histogram.js';
import { getOrCreate } from '../shared/maps.js';
import type { RequestRecord } from '../shared/metrics.js';
import type { IntervalClass } from '../shared/protocol.js';
import { Recorder } from './recorder.js';

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;
/** The soak round's runs take ten times as long. */
const TIMEOUT_MS = SOAK > 1 ? 600_000 : undefined;
const MS = 1_000_000;
const Q = [0, 0.1, 0.5, 0.9, 0.99, 1];

function record(cls: string, ok: boolean, sentNs: number, ttftNs: number, e2eNs: number): RequestRecord {
  return {
    class: cls,
    request_index: 0,
    status: ok ? 'ok' : 'http_error',
    http_status: ok ? 200 : 503,
    intended_ns: sentNs,
    sent_ns: sentNs,
    headers_ns: sentNs + 1,
    first_output_ns: sentNs + ttftNs,
    first_content_ns: sentNs + ttftNs,
    last_token_ns: sentNs + e2eNs,
    done_ns: sentNs + e2eNs,
    prompt_tokens: 10,
    completion_tokens: 8,
    output_token_source: 'usage',
    cached_tokens: null,
    reasoning_chunks: 0,
    content_chunks: 8,
    canary: null,
    retry_after_s: null,
    dropped_reason: null,
    error: null,
  };
}

const step = fc.oneof(
  fc.record({
    kind: fc.constant('issued' as const),
    advanceNs: fc.integer({ min: 0, max: 1500 * MS }),
    cls: fc.constantFrom('a', 'b'),
    lagNs: fc.option(fc.integer({ min: 0, max: 50 * MS }), { nil: null }),
  }),
  fc.record({
    kind: fc.constant('finished' as const),
    advanceNs: fc.integer({ min: 0, max: 1500 * MS }),
    cls: fc.constantFrom('a', 'b'),
    ok: fc.boolean(),
    ttftNs: fc.integer({ min: 1, max: 2000 * MS }),
    e2eNs: fc.integer({ min: 2000 * MS, max: 9000 * MS }),
    gaps: fc.array(fc.integer({ min: 1, max: 100 * MS }), { maxLength: 5 }),
  }),
  // Lets the encoding of closed seconds run between records (it takes one timer per histogram).
  fc.record({ kind: fc.constant('yield' as const), advanceNs: fc.constant(0) }),
);

describe('agent recorder (property)', () => {
  it(
    'intervals add up exactly to the run histograms, whatever the timing',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 60 }), async (steps) => {
          let now = 0;
          const emitted: [number, Record<string, IntervalClass>][] = [];
          const rec = new Recorder(
            [],
            () => now,
            (s, c) => emitted.push([s, c]),
          );
          const issued = new Map<string, number>();
          const ended = new Map<string, number>();
          for (const s of steps) {
            now += s.advanceNs;
            if (s.kind === 'yield') await new Promise((r) => setTimeout(r, 0));
            else if (s.kind === 'issued') {
              rec.issued(s.cls, s.lagNs);
              issued.set(s.cls, (issued.get(s.cls) ?? 0) + 1);
            } else {
              const r = record(s.cls, s.ok, Math.max(0, now - s.e2eNs), s.ttftNs, s.e2eNs);
              rec.finished(r, s.gaps);
              ended.set(s.cls, (ended.get(s.cls) ?? 0) + 1);
            }
          }
          rec.flushAll();
          await rec.drained();

          expect(emitted.map(([s]) => s)).toEqual(emitted.map((_, i) => i));
          expect(emitted.at(-1)![0]).toBe(Math.floor(now / 1e9));
          const fromIntervals = new Map<string, Histogram>();
          for (const cls of ['a', 'b']) {
            const of = emitted.map(([, c]) => c[cls]).filter((c) => c !== undefined);
            expect(of.reduce((n, c) => n + c.issued, 0)).toBe(issued.get(cls) ?? 0);
            expect(of.reduce((n, c) => n + c.completed + c.failed, 0)).toBe(ended.get(cls) ?? 0);
            for (const c of of)
              for (const [m, e] of Object.entries(c.histograms)) addEncoded(getOrCreate(fromIntervals, `${cls}/${m}`, newHistogram), e);
          }
          const run = rec.encodeRun();
          for (const cls of ['a', 'b']) {
            // Schedule lag is in the interval of the send and in the run histograms from the record: not comparable.
            const metrics = new Set([
              ...Object.keys(run[cls]?.all ?? {}),
              ...[...fromIntervals.keys()].filter((k) => k.startsWith(`${cls}/`)).map((k) => k.slice(2)),
            ]);
            metrics.delete('schedule_lag');
            for (const m of metrics) {
              const whole = newHistogram();
              const e = run[cls]?.all?.[m];
              if (e) addEncoded(whole, e);
              const parts = fromIntervals.get(`${cls}/${m}`) ?? newHistogram();
              expect(parts.totalCount, `${cls}/${m}`).toBe(whole.totalCount);
              expect(percentilesNs(parts, Q), `${cls}/${m}`).toEqual(percentilesNs(whole, Q));
            }
          }
        }),
        { numRuns: 60 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});
