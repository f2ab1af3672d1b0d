import { describe, expect, it } from 'vitest';
import type { StageFigures } from './verdict.js';
import { judgeStage, saturated, stageFigures } from './verdict.js';

// A run.json cut down to what a stage reads, with known numbers.
function runJson(over: { window?: object; agents?: object[]; limited?: boolean; status?: string; server?: object } = {}) {
  return {
    status: over.status ?? 'completed',
    status_reason: over.status === 'aborted' ? 'agent a2 failed' : null,
    wall_clock_ms: 10_000,
    requests: 120,
    client_health: { client_limited: over.limited ?? false, limits: { schedule_lag_p99_ms: 50, event_loop_delay_p99_ms: 50 } },
    agents: over.agents ?? [
      { agent_id: 'a1', requests: 60, schedule_lag_p99_ms: 2, event_loop_delay_p99_ms: 11 },
      { agent_id: 'a2', requests: 60, schedule_lag_p99_ms: 3, event_loop_delay_p99_ms: 12 },
    ],
    classes: {
      rt: {
        outcome_counts: { ok: 95, http_error: 4, timeout: 1 },
        status_counts: { '200': 95, '429': 3, '503': 1, none: 1 },
        windows: {
          measure: {
            requests: 80,
            completed: 80,
            failed: 0,
            http_429: 0,
            ttft_p50_ms: 40,
            ttft_p95_ms: 90,
            ttft_p99_ms: 120,
            tpot_p50_ms: 8,
            tpot_p95_ms: 9,
            tpot_p99_ms: 11,
            throughput_rps: 9.5,
            throughput_tok_s: 95,
            slo_attainment: 0.98,
            ...over.window,
          },
        },
      },
    },
    ...(over.server ? { server: { windows: { measure: over.server } } } : {}),
    data_quality: {
      valid: false,
      checks: [
        { name: 'schedule_kept', status: 'pass' },
        { name: 'headers_honoured', status: 'not_evaluated' },
        { name: 'stream_integrity', status: 'fail' },
      ],
    },
  };
}

const M = { start_s: 2, end_s: 10 };
const figures = (run: Record<string, unknown>, departures: { requests: number; completionTokens: number } | null = null): StageFigures =>
  stageFigures(run, 'rt', 'measure', M, 'rate', 10, 10, departures);
const SLO = { ttft_p95_ms: 100, tpot_p95_ms: 10, success_rate_min: 0.99 };

describe('stageFigures', () => {
  it('reads the measured window and derives rates', () => {
    const f = figures(runJson(), { requests: 78, completionTokens: 780 });
    expect(f).toMatchObject({
      offered_rps: 10,
      offered_tok_s: 100,
      scheduled_rps: 10, // 80 requests in the 8 s window
      achieved_rps: 9.75, // 78 departures / 8 s
      achieved_tok_s: 97.5,
      all_classes_rps: 12,
      ttft_p95_ms: 90,
      success_rate: 1,
      error_share: 0,
      server: null,
      client_limited: false,
      client_limited_agents: [],
      failures_by_status: { http_error: 4, timeout: 1, http_429: 3, http_503: 1, http_none: 1 },
      data_quality_valid: false,
      slo_proof_valid: null,
      failed_checks: ['stream_integrity'],
    });
    expect(figures(runJson()).achieved_rps).toBe(9.5); // without departures: run.json throughput_rps
  });
  it('takes server signals when the run scraped them', () => {
    const f = figures(
      runJson({ server: { max_vllm_running: 12, max_vllm_waiting: 3, max_vllm_kv_cache_usage_pct: 41.5, max_pool_saturation: 0.9 } }),
    );
    expect(f.server).toEqual({
      max_vllm_running: 12,
      max_vllm_waiting: 3,
      max_vllm_kv_cache_usage_pct: 41.5,
      max_pool_saturation: 0.9,
      max_epp_queue: null,
    });
  });
});

describe('the SLO basis', () => {
  it('judges TTFT from the intended send when the SLO says so, and says which it used', () => {
    const run = runJson({ window: { ttft_from_intended_p50_ms: 60, ttft_from_intended_p95_ms: 140, ttft_from_intended_p99_ms: 200 } });
    const sent = stageFigures(run, 'rt', 'measure', M, 'rate', 10, 10, { requests: 80, completionTokens: 0 });
    const intended = stageFigures(run, 'rt', 'measure', M, 'rate', 10, 10, { requests: 80, completionTokens: 0 }, 'intended');
    expect([sent.ttft_basis, sent.ttft_p95_ms]).toEqual(['sent', 90]);
    expect([intended.ttft_basis, intended.ttft_p95_ms]).toEqual(['intended', 140]);
    expect(judgeStage(sent, SLO).verdict).toBe('pass');
    const judged = judgeStage(intended, { ...SLO, basis: 'intended' });
    expect(judged.verdict).toBe('fail');
    expect(judged.reasons.join('; ')).toMatch(/^p95 TTFT from intended send 140(\.0)? ms > SLO 100(\.0)? ms/);
  });
});

describe('judgeStage', () => {
  it('passes within the SLO and at ≥ 90% of offered', () => {
    expect(judgeStage(figures(runJson(), { requests: 76, completionTokens: 0 }), SLO).verdict).toBe('pass'); // 9.5 of 10 req/s
  });
  it('names every reason for a fail', () => {
    const f = figures(runJson({ window: { ttft_p95_ms: 812.44, tpot_p95_ms: 12, completed: 70, failed: 10 } }), {
      requests: 56,
      completionTokens: 0,
    });
    expect(judgeStage(f, SLO)).toEqual({
      verdict: 'fail',
      reasons: [
        // 10 of 80 failed (12.5% > 5%): the p95 falls on a failure, whatever the successes' p95.
        'p95 TTFT falls on a failed request (10 of 80 failed, each ranked +∞; successful-only 812.4 ms) > SLO 100 ms',
        'p95 TPOT falls on a failed request (10 of 80 failed, each ranked +∞; successful-only 12 ms) > SLO 10 ms',
        'success rate 87.5% < SLO 99.0% (10 of 80 failed; 429/503/timeouts count as misses)',
        'saturated: achieved 7 req/s < 90% of the 10 req/s offered in the window (70.0%)',
      ],
    });
  });
  it('a stage whose successes are fast but 6% of requests failed misses a latency-only SLO', () => {
    const f = figures(runJson({ window: { completed: 75, failed: 5, requests: 80, ttft_p95_ms: 20 } }), {
      requests: 76,
      completionTokens: 0,
    });
    expect(judgeStage(f, { ttft_p95_ms: 100 }).reasons[0]).toBe(
      'p95 TTFT falls on a failed request (5 of 80 failed, each ranked +∞; successful-only 20 ms) > SLO 100 ms',
    );
    const four = figures(runJson({ window: { completed: 76, failed: 4, requests: 80, ttft_p95_ms: 20 } }), {
      requests: 76,
      completionTokens: 0,
    });
    expect(judgeStage(four, { ttft_p95_ms: 100 }).verdict).toBe('pass'); // 5% exactly: the p95 is still a success
  });

  it('saturation alone fails a stage: 89% of offered', () => {
    const f = figures(runJson(), { requests: 71, completionTokens: 0 }); // 8.875 req/s of 10 over 8 s: 9 short
    expect(judgeStage(f, {})).toMatchObject({ verdict: 'fail', reasons: [expect.stringContaining('saturated')] });
  });
  it('a shortfall of two requests is counting noise, three is not', () => {
    expect(saturated(1.25, 1, 8)).toBe(false); // 10 offered, 8 achieved: 80% but 2 short
    expect(saturated(1.25, 0.875, 8)).toBe(true); // 7 achieved: 3 short
    expect(saturated(10, 9.1, 8)).toBe(false); // 91%
  });
  it('a client-limited stage is neither pass nor fail, and names the agent', () => {
    const run = runJson({
      limited: true,
      agents: [
        { agent_id: 'a1', requests: 60, schedule_lag_p99_ms: 2, event_loop_delay_p99_ms: 11 },
        { agent_id: 'a2', requests: 40, schedule_lag_p99_ms: 80, event_loop_delay_p99_ms: 61 },
      ],
    });
    const f = figures(run);
    expect(f.client_limited_agents).toEqual([{ agent_id: 'a2', schedule_lag_p99_ms: 80, event_loop_delay_p99_ms: 61, requests_per_s: 4 }]);
    // A run.json from before the share rule: named by its p99 figures, and pointed at.
    expect(judgeStage(f, SLO)).toEqual({ verdict: 'client_limited', reasons: ['client-limited: see run.json client_health'] });
    // Today's run names its limited agents and says which second and why: that is the reason.
    const why =
      'a1: 5 of 100 (5.0%, above 2.0% with 95% confidence > 1.0% allowed) of its requests were sent more than 50 ms after their intended time — worst: a1 at second 7, 3 requests, sends up to 120 ms late';
    Object.assign(run.client_health, { limited_agents: ['a1'], reasons: [why] });
    const g = figures(run);
    expect(g.client_limited_agents.map((a) => a.agent_id)).toEqual(['a1']);
    expect(judgeStage(g, SLO)).toEqual({ verdict: 'client_limited', reasons: [`client-limited: ${why}`] });
  });
  it('a stage stopped by a plan abort rule is over capacity (fail), not an error', () => {
    const r = runJson({ status: 'aborted' });
    r.status_reason = 'abort rule abort.error_share_above: class rt failed 40 of 44 requests (90.9% > 50%) for 2 s (window 5 s)';
    expect(judgeStage(figures(r), SLO)).toEqual({ verdict: 'fail', reasons: [`over capacity, stopped early: ${r.status_reason}`] });
  });

  it('an aborted run or an endpoint that refuses every connection is an error', () => {
    expect(judgeStage(figures(runJson({ status: 'aborted' })), SLO)).toEqual({
      verdict: 'error',
      reasons: ['the run aborted: agent a2 failed'],
    });
    const dead = runJson({ window: { completed: 0, failed: 80, ttft_p95_ms: null } });
    dead.classes.rt.outcome_counts = { connect_error: 80 } as never;
    expect(judgeStage(figures(dead), SLO)).toEqual({
      verdict: 'error',
      reasons: ['the endpoint did not answer (80 connect errors, nothing completed)'],
    });
  });
  it('no request in the window fails', () => {
    expect(judgeStage(figures(runJson({ window: { requests: 0, completed: 0 } })), SLO).verdict).toBe('fail');
  });
});
