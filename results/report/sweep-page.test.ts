import { describe, expect, it } from 'vitest';
import type { StageRecord, SweepState } from '../../coordinator/sweep/sweep-json.js';
import { SWEEP_DEFINITIONS, sweepDocument } from '../../coordinator/sweep/sweep-json.js';
import type { SweepDoc } from './sweep-page.js';
import { niceMax, sweepReportHtml } from './sweep-page.js';

function stage(index: number, value: number, verdict: StageRecord['verdict'], achieved: number, ttft95: number): StageRecord {
  return {
    index,
    value,
    verdict,
    reasons: [verdict],
    reason: verdict === 'fail' ? `p95 TTFT ${ttft95} ms > SLO 450 ms` : verdict,
    measure_window: { start_s: 1.5, end_s: 7 },
    run_dir: `stages/run${index}`,
    run_status: 'completed',
    run_status_reason: null,
    agents: 2,
    agent_health: [],
    ttft_basis: 'sent',
    run_wall_s: 7,
    measure_s: 5.5,
    offered_rps: value,
    offered_concurrency: null,
    scheduled_rps: value,
    offered_tok_s: value * 11,
    achieved_rps: achieved,
    achieved_tok_s: achieved * 11,
    all_classes_rps: value,
    ttft_p50_ms: ttft95 / 2,
    ttft_p95_ms: ttft95,
    ttft_p99_ms: ttft95 * 1.1,
    tpot_p50_ms: 20,
    tpot_p95_ms: 21,
    tpot_p99_ms: 22,
    requests: 10,
    completed: 10,
    failed: 0,
    http_429: 0,
    success_rate: 1,
    error_share: 0,
    goodput_rps: achieved,
    slo_attainment: 1,
    failures_by_status: {},
    server: null,
    client_limited: false,
    client_limited_agents: [],
    client_limited_reasons: [],
    latency_on_failure: [],
    ttft_p95_successful_ms: null,
    tpot_p95_successful_ms: null,
    measurement: 1,
    data_quality_valid: true,
    slo_proof_valid: true,
    failed_checks: [],
  };
}

const state: SweepState = {
  sweepId: 'id',
  sweep: {
    schema: 'loadfleet.sweep/v1',
    name: 'cap',
    plan: 'p.json',
    class: 'rt',
    scale: 'rate',
    strategy: { type: 'bisect', pass: 2, fail: 8, resolution: 0.5 },
    stage_duration_s: 7,
    warmup_s: 1.5,
  },
  sweepFile: '/x/s.json',
  planFile: '/x/p.json',
  background: [],
  slo: { ttft_p95_ms: 450 },
  agents: 2,
  startedAt: new Date(0),
  finishedAt: new Date(60_000),
  stages: [stage(0, 2, 'pass', 2, 320), stage(1, 8, 'fail', 4, 7400), stage(2, 5, 'fail', 4, 2200), stage(3, 3.5, 'pass', 3.5, 330)],
  stop: { rule: 'done', reason: 'the bracket [3.5, 5] is within the resolution 2' },
  coordinator: { host: 'h', pid: 1 },
  resumed: [],
};

describe('sweepDocument', () => {
  it('gives capacity, bracket, knee, answer and a definition for the headline figures', () => {
    const doc = sweepDocument(state);
    expect(doc).toMatchObject({
      status: 'completed',
      capacity: 3.5,
      bracket: [3.5, 5],
      knee: { value: 3.5, next_value: 5 },
      unit: 'req/s',
    });
    expect(doc.answer).toContain('Capacity 3.5 req/s, bracket [3.5, 5]');
    for (const key of ['capacity', 'bracket', 'knee', 'client_advice', 'stages[].achieved_rps', 'stages[].verdict'])
      expect(SWEEP_DEFINITIONS[key]).toBeTruthy();
    expect(sweepDocument({ ...state, stop: { rule: 'interrupted', reason: 'SIGINT' } }).status).toBe('interrupted');
  });
  it('defines every field of a stage', () => {
    const skip = ['value', 'verdict', 'reason', 'run_dir', 'run_status_reason'];
    const undefinedKeys = Object.keys(state.stages[0]!).filter((k) => !skip.includes(k) && !SWEEP_DEFINITIONS[`stages[].${k}`]);
    expect(undefinedKeys).toEqual([]);
  });
});

describe('sweepReportHtml', () => {
  it('draws both charts with the capacity and the SLO marked, and escapes text', () => {
    const doc = sweepDocument({ ...state, sweep: { ...state.sweep, name: 'a<b' } }) as unknown as SweepDoc;
    const html = sweepReportHtml(doc);
    expect(html.match(/<svg /g)).toHaveLength(2);
    expect(html).toContain('capacity 3.5');
    expect(html).toContain('fails 5');
    expect(html).toContain('SLO p95 450 ms');
    expect(html).toContain('a&lt;b');
    expect(html).not.toContain('a<b');
    expect(html).not.toContain('<script');
    // One point per stage and series: 3 latency series + 3 throughput series (with goodput), 4 stages each.
    expect(html.match(/<circle /g)).toHaveLength(24);
    expect(html).toContain('<th>goodput req/s</th>');
  });
  it('rounds axes up to 1, 2 or 5 × 10^k', () => {
    expect([niceMax(3.9), niceMax(8), niceMax(7400), niceMax(0.3)]).toEqual([5, 10, 10000, 0.5]);
  });
});
