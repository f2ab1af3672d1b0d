import { describe, expect, it } from 'vitest';
import type { StageSummary } from './analysis.js';
import { answerOf, capacityOf, clientAdvice, kneeOf } from './analysis.js';
import type { Verdict } from './strategy.js';

const st = (value: number, verdict: Verdict, achieved: number | null = value): StageSummary => ({
  value,
  verdict,
  reason: verdict,
  achieved_rps: achieved,
  scheduled_rps: value,
  all_classes_rps: value + 1,
  agents: 2,
  client_limited_agents: [],
});

describe('capacityOf', () => {
  it('is the highest pass below every fail, bracketed by the lowest fail above it', () => {
    expect(capacityOf([st(2, 'pass'), st(8, 'fail'), st(5, 'fail'), st(3.5, 'pass'), st(4.25, 'fail'), st(3.875, 'pass')])).toEqual({
      capacity: 3.875,
      bracket: [3.875, 4.25],
      ignored_passes: [],
    });
  });
  it('does not believe a pass above a fail', () => {
    expect(capacityOf([st(1, 'pass'), st(2, 'fail'), st(3, 'pass'), st(4, 'fail')])).toEqual({
      capacity: 1,
      bracket: [1, 2],
      ignored_passes: [3],
    });
  });
  it('open ends are null; client-limited and error stages never count', () => {
    expect(capacityOf([st(1, 'pass'), st(2, 'client_limited')])).toEqual({ capacity: 1, bracket: [1, null], ignored_passes: [] });
    expect(capacityOf([st(1, 'fail'), st(2, 'error')])).toEqual({ capacity: null, bracket: [null, 1], ignored_passes: [] });
  });
});

describe('kneeOf', () => {
  it('is the value before achieved throughput stops following the offered load', () => {
    // 2→4: +100% achieved for +100% offered (e=1); 4→8: 4→5 is +25% for +100% (e=0.25 < 0.5)
    expect(kneeOf([st(2, 'pass'), st(4, 'pass'), st(8, 'fail', 5), st(16, 'fail', 5)], 'rate')).toEqual({
      value: 4,
      achieved_rps: 4,
      next_value: 8,
      elasticity: 0.25,
    });
  });
  it('counts an overloaded stage with no departure in its window as a stall', () => {
    expect(kneeOf([st(1, 'pass'), st(3.5, 'pass'), st(4.125, 'fail', 0), st(6, 'fail', 0)], 'rate')).toMatchObject({
      value: 3.5,
      next_value: 4.125,
    });
  });
  it('is null while throughput keeps growing, and skips client-limited stages', () => {
    expect(kneeOf([st(2, 'pass'), st(4, 'pass'), st(8, 'pass', 7.8)], 'rate').value).toBeNull();
    expect(kneeOf([st(2, 'pass'), st(4, 'client_limited', 1), st(8, 'pass', 8)], 'rate').value).toBeNull();
  });
});

describe('clientAdvice', () => {
  it('sizes the fleet from the limited agent: ⌈load / (0.8 · ceiling)⌉', () => {
    const s: StageSummary = {
      ...st(40, 'client_limited'),
      all_classes_rps: 45,
      agents: 2,
      client_limited_agents: [{ agent_id: 'a2', requests_per_s: 15 }],
    };
    // 45 / (0.8 × 15) = 3.75 → 4
    expect(clientAdvice([st(20, 'pass'), s], 'rate')).toMatchObject({
      stage_value: 40,
      per_agent_ceiling_rps: 15,
      load_rps: 45,
      agents_needed: 4,
      limited_agents: ['a2'],
      text: 'the client, not the server, saturated first at 40 req/s: add agents or workers — an agent was limited at 15 req/s, so 45 req/s needs about 4 agents (2 were used)',
    });
  });
  it('asks for at least one more agent, and is null without a limited stage', () => {
    const s: StageSummary = {
      ...st(4, 'client_limited'),
      all_classes_rps: 4,
      client_limited_agents: [{ agent_id: 'a1', requests_per_s: 10 }],
    };
    expect(clientAdvice([s], 'rate')?.agents_needed).toBe(3);
    expect(clientAdvice([st(1, 'pass')], 'rate')).toBeNull();
  });
});

describe('answerOf', () => {
  it('says the capacity, the bracket, the failing reason, the knee and why it stopped', () => {
    const stages = [st(2, 'pass'), st(4, 'pass'), { ...st(8, 'fail', 5), reason: 'p95 TTFT 812 ms > SLO 250 ms' }];
    const text = answerOf({
      cls: 'realtime',
      scale: 'rate',
      background: ['batch'],
      slo: { ttft_p95_ms: 250 },
      stages,
      capacity: capacityOf(stages),
      knee: kneeOf(stages, 'rate'),
      advice: null,
      stopRule: 'max_failing_stages',
      stopReason: '2 failing stages',
    });
    expect(text).toBe(
      'realtime meets its SLO (p95 TTFT ≤ 250 ms, ≥ 90% of offered throughput achieved) up to 4 req/s with batch running as planned; at 8 req/s it does not (p95 TTFT 812 ms > SLO 250 ms). Capacity 4 req/s, bracket [4, 8]. Achieved throughput stops following the offered load after 4 req/s (4 req/s achieved). The sweep stopped: 2 failing stages.',
    );
  });
});
