import { describe, expect, it } from 'vitest';
import { addLatencyRow, emptyLatencies, rankedQuantile } from './ranked-latency.js';
import { judgeStage, stageFigures } from './verdict.js';

const T0 = 1_700_000_000_000_000_000;
const row = (i: number, over: Record<string, unknown> = {}) => ({
  class: 'rt',
  status: 'ok',
  intended_unix_ns: T0 + 2e9 + i * 1e8,
  sent_unix_ns: T0 + 2e9 + i * 1e8 + 1e6,
  first_output_unix_ns: T0 + 2e9 + i * 1e8 + 1e6 + (20 + i) * 1e6,
  first_content_unix_ns: T0 + 2e9 + i * 1e8 + 1e6 + (20 + i) * 1e6,
  done_unix_ns: T0 + 2e9 + i * 1e8 + 1e6 + (20 + i) * 1e6 + 100e6,
  completion_tokens: 11,
  output_token_source: 'usage',
  ...over,
});

describe('rankedQuantile', () => {
  it('ranks failures above every success', () => {
    const v = Array.from({ length: 96 }, (_, i) => (i + 1) * 1e6);
    // 96 successes and 4 failures: rank 95 is a success (95 ms), rank 99 a failure.
    expect(rankedQuantile(v, 4, 0.95)).toEqual({ ms: 95, onFailure: false });
    expect(rankedQuantile(v, 4, 0.99)).toEqual({ ms: null, onFailure: true });
    expect(rankedQuantile(v, 0, 0.99)).toEqual({ ms: 96, onFailure: false });
    expect(rankedQuantile([], 3, 0.5)).toEqual({ ms: null, onFailure: true });
    expect(rankedQuantile([], 0, 0.5)).toEqual({ ms: null, onFailure: false });
  });
});

describe('a stage window read from its records', () => {
  it('counts the window by intended time, ranks failures +∞, and does not hold an unmeasurable success against TPOT', () => {
    const acc = emptyLatencies();
    const M = { start_s: 2, end_s: 10 };
    for (let i = 0; i < 36; i++) addLatencyRow(acc, row(i), 'rt', T0, M, 'sent');
    // Two failures, two 1-token answers (no TPOT), one request outside the window, one of another class.
    addLatencyRow(acc, row(36, { status: 'http_error', first_content_unix_ns: null, done_unix_ns: null }), 'rt', T0, M, 'sent');
    addLatencyRow(acc, row(37, { status: 'timeout' }), 'rt', T0, M, 'sent');
    for (const i of [38, 39]) addLatencyRow(acc, row(i, { completion_tokens: 1 }), 'rt', T0, M, 'sent');
    addLatencyRow(acc, row(0, { intended_unix_ns: T0 + 11e9, sent_unix_ns: T0 + 11e9 }), 'rt', T0, M, 'sent');
    addLatencyRow(acc, row(1, { class: 'bulk' }), 'rt', T0, M, 'sent');
    expect(acc).toMatchObject({ requests: 40, failed: 2 });
    expect(acc.ttftNs).toHaveLength(38);
    expect(acc.tpotNs).toHaveLength(36);
    expect(acc.ttftNs[0]).toBeCloseTo(20e6, -3);
    // The intended basis counts the 1 ms the send was late.
    const intended = emptyLatencies();
    addLatencyRow(intended, row(0), 'rt', T0, M, 'intended');
    expect(intended.ttftNs[0]).toBeCloseTo(21e6, -3);

    // 2 of 40 failed (5%: the old count rule let the p95 stand) — but TPOT ranks 36 successes and
    // 2 failures: rank ⌈0.95 · 38⌉ = 37 is a failure, so the TPOT bound is missed.
    const run = {
      status: 'completed',
      wall_clock_ms: 10_000,
      requests: 40,
      client_health: { client_limited: false },
      agents: [],
      classes: { rt: { windows: { measure: { requests: 40, completed: 38, failed: 2, ttft_p95_ms: 56, tpot_p95_ms: 10 } } } },
    };
    const f = stageFigures(run, 'rt', 'measure', M, 'rate', 5, 11, null, 'sent', acc);
    expect(f.latency_on_failure).toEqual(['ttft_p99_ms', 'tpot_p95_ms', 'tpot_p99_ms']);
    expect(f.ttft_p95_ms).toBe(59); // rank 38 of 40: the last success
    expect(f.tpot_p95_ms).toBeNull();
    expect(f.tpot_p95_successful_ms).toBe(10);
    expect(judgeStage(f, { ttft_p95_ms: 100, tpot_p95_ms: 50 }).reasons).toEqual([
      'p95 TPOT falls on a failed request (2 of 40 failed, each ranked +∞; successful-only 10 ms) > SLO 50 ms',
    ]);
  });
});
