// A minimal run.json of the published shape (shared/run-schema.ts), for unit tests of its readers:
// one class, one window, the figures a test names on top.
import type { RunJson, RunJsonClass } from '../shared/run-schema.js';
import { RUN_SCHEMA } from '../shared/run-schema.js';

const SHA = '0'.repeat(64);

/** One class's figures: counts and the `all` window. */
export function runClass(over: Partial<RunJsonClass> = {}): RunJsonClass {
  return { requests: 0, completed: 0, failed: 0, http_200: 0, http_429: 0, closed_loop: false, windows: { all: {} }, ...over };
}

/** A run.json with `over` on top of an empty completed run of one class `chat`. */
export function runJson(over: Partial<RunJson> = {}): RunJson {
  return {
    schema: RUN_SCHEMA,
    run_id: 'r1',
    status: 'completed',
    status_reason: null,
    plan: { schema: 'loadfleet.plan/v1', name: 'p', seed: 1, duration_s: 1, classes: [] } as unknown as RunJson['plan'],
    plan_sha256: SHA,
    schedule_sha256: SHA,
    started_at: '2026-12-07T00:00:00.000Z',
    finished_at: '2026-12-07T00:00:01.000Z',
    started_at_unix_ns: 1_796_601_600_000_000_000n,
    finished_at_unix_ns: 1_796_601_601_000_000_000n,
    wall_clock_ms: 1000,
    clock: {
      clock_domain_id: 'd',
      alignment: 'explicit-common-clock-domain',
      max_abs_offset_ns: 0,
      max_offset_uncertainty_ns: 0,
      start_skew_ns: 0,
    },
    agents: [],
    requests: 0,
    completed: 0,
    failed: 0,
    status_counts: {},
    error_counts: {},
    classes: { chat: runClass() },
    metric_population: {
      attempted_requests: 0,
      successful_requests: 0,
      performance_eligible_requests: 0,
      excluded_requests: 0,
      failure_policy: 'failed requests stay out of latency distributions',
      p99_interpretation: 'nearest-rank',
    },
    histograms: {
      lowest_ns: 1000,
      highest_ns: 3_600_000_000_000,
      significant_digits: 3,
      merge: 'hdr-add',
      max_relative_error_vs_exact: null,
    },
    client_health: { client_limited: false, reasons: [], schedule_lag_p99_ms: null, event_loop_delay_p99_ms: null },
    timing_methodology: {},
    ...over,
  };
}
