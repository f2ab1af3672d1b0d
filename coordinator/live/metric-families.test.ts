import { describe, expect, it } from 'vitest';
import { buildSchedule } from '../../shared/schedule.js';
import { hist, PLAN, record } from '../../test/live-fixtures.js';
import { parsePrometheus, sampleValue } from '../../test/prom-parse.js';
import { writeExposition } from './exposition.js';
import { BUCKETS_S, liveFamilies } from './metric-families.js';
import { LiveState } from './state.js';

function exposition(): ReturnType<typeof parsePrometheus> {
  const live = new LiveState(PLAN, buildSchedule(PLAN), 'run-7');
  live.second(
    0,
    'rt',
    { issued: 10, completed: 8, failed: 1 },
    new Map([
      ['ttft', hist(30, 30, 70, 300)],
      ['tpot', hist(8, 9)],
      ['e2e', hist(900, 1200)],
    ]),
  );
  live.second(1, 'rt', { issued: 10, completed: 10, failed: 0 }, new Map([['ttft', hist(45)]]));
  live.second(1, 'batch', { issued: 4, completed: 0, failed: 0 }, new Map());
  live.finished(record('rt', 'ok', 200, 0));
  live.finished(record('rt', 'timeout', 200, 1));
  live.finished(record('rt', 'connect_error', null, 2));
  const health = { schedule_lag_p99_ms: 2.5, schedule_lag_max_ms: 9, event_loop_delay_p99_ms: 1.5, event_loop_delay_max_ms: 12, cpu_ms: 1 };
  const snap = live.snapshot(
    2.5,
    [
      { id: 'agent-1', lost: false, final: false, health },
      { id: 'agent-2', lost: true, final: false, health: null },
    ],
    null,
  );
  return parsePrometheus(writeExposition(liveFamilies(snap)));
}

describe('liveFamilies', () => {
  const p = exposition();

  it('gives every family a loadfleet_ name, a TYPE and a one-sentence HELP', () => {
    expect(p.types.size).toBeGreaterThanOrEqual(17);
    for (const [name] of p.types) {
      expect(name).toMatch(/^loadfleet_[a-z0-9_]+$/);
      expect(p.help.get(name)).toMatch(/^[A-Z"'].*\.$/);
    }
  });

  it('exports the counters of the merged span per class', () => {
    expect(sampleValue(p, 'loadfleet_run_info', { run_id: 'run-7', plan: 'live-unit' })).toBe(1);
    expect(sampleValue(p, 'loadfleet_merged_seconds')).toBe(2);
    expect(sampleValue(p, 'loadfleet_run_elapsed_seconds')).toBe(2.5);
    expect(sampleValue(p, 'loadfleet_requests_offered_total', { class: 'rt' })).toBe(20);
    expect(sampleValue(p, 'loadfleet_requests_offered_total', { class: 'batch' })).toBeUndefined();
    expect(sampleValue(p, 'loadfleet_target_concurrency', { class: 'batch' })).toBe(4);
    expect(sampleValue(p, 'loadfleet_requests_sent_total', { class: 'rt' })).toBe(20);
    expect(sampleValue(p, 'loadfleet_requests_completed_total', { class: 'rt' })).toBe(18);
    expect(sampleValue(p, 'loadfleet_requests_failed_total', { class: 'rt' })).toBe(1);
    expect(sampleValue(p, 'loadfleet_requests_in_flight', { class: 'rt' })).toBe(1);
    expect(sampleValue(p, 'loadfleet_requests_in_flight', { class: 'batch' })).toBe(4);
    expect(sampleValue(p, 'loadfleet_requests_finished_total', { class: 'rt', status: 'ok', code: '200' })).toBe(1);
    expect(sampleValue(p, 'loadfleet_requests_finished_total', { class: 'rt', status: 'timeout', code: '200' })).toBe(1);
    expect(sampleValue(p, 'loadfleet_requests_finished_total', { class: 'rt', status: 'connect_error', code: 'none' })).toBe(1);
  });

  it('exports TTFT / TPOT / e2e as histograms in seconds, only for classes with data', () => {
    const b = (le: string): number | undefined => sampleValue(p, 'loadfleet_time_to_first_token_seconds_bucket', { class: 'rt', le });
    expect([b('0.02'), b('0.04'), b('0.06'), b('0.08'), b('0.25'), b('0.5'), b('+Inf')]).toEqual([0, 2, 3, 4, 4, 5, 5]);
    expect(sampleValue(p, 'loadfleet_time_to_first_token_seconds_count', { class: 'rt' })).toBe(5);
    expect(sampleValue(p, 'loadfleet_time_to_first_token_seconds_sum', { class: 'rt' })).toBeCloseTo(0.475, 3);
    expect(sampleValue(p, 'loadfleet_time_per_output_token_seconds_count', { class: 'rt' })).toBe(2);
    expect(sampleValue(p, 'loadfleet_time_per_output_token_seconds_bucket', { class: 'rt', le: '0.0075' })).toBe(0);
    expect(sampleValue(p, 'loadfleet_time_per_output_token_seconds_bucket', { class: 'rt', le: '0.01' })).toBe(2);
    expect(sampleValue(p, 'loadfleet_e2e_request_latency_seconds_bucket', { class: 'rt', le: '1' })).toBe(1);
    expect(sampleValue(p, 'loadfleet_time_to_first_token_seconds_count', { class: 'batch' })).toBeUndefined();
  });

  it("uses vLLM's bucket bounds (a superset for TPOT)", () => {
    const vllmTpot = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
    expect(vllmTpot.every((b) => BUCKETS_S.tpot.includes(b))).toBe(true);
    expect(BUCKETS_S.ttft.slice(0, 5)).toEqual([0.001, 0.005, 0.01, 0.02, 0.04]);
    expect(BUCKETS_S.e2e.at(-1)).toBe(7680);
  });

  it('exports agent health in seconds and marks lost agents down', () => {
    expect(sampleValue(p, 'loadfleet_agent_up', { agent: 'agent-1' })).toBe(1);
    expect(sampleValue(p, 'loadfleet_agent_up', { agent: 'agent-2' })).toBe(0);
    expect(sampleValue(p, 'loadfleet_agent_schedule_lag_p99_seconds', { agent: 'agent-1' })).toBe(0.0025);
    expect(sampleValue(p, 'loadfleet_agent_event_loop_delay_max_seconds', { agent: 'agent-1' })).toBe(0.012);
    expect(sampleValue(p, 'loadfleet_agent_schedule_lag_p99_seconds', { agent: 'agent-2' })).toBeUndefined();
  });
});
