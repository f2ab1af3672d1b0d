// A target that misbehaves on purpose (engine-sim's forced faults): every request is recorded and
// classified, none enters the latency distributions, and the run still completes (degraded).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan, TrafficClass } from '../shared/plan.js';
import { onlyRunDir, readRequests, readRunJson, runCoordinator, startSim, tempDir, writePlan } from './harness.js';

const FAULTS: Record<string, string> = {
  '429': 'http_error',
  '5xx': 'http_error',
  reset: 'incomplete_stream',
  malformed: 'malformed_stream',
  truncate: 'incomplete_stream',
  'no-usage': 'missing_usage',
  hang: 'timeout',
};

function faultClass(fault: string): TrafficClass {
  return {
    name: `f-${fault}`,
    headers: { 'x-sim-fault': fault },
    prompt: { input_tokens: 16, output_tokens: 8 },
    load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 2, rate_per_s: 3 }] },
  };
}

describe('a misbehaving target', () => {
  let sim: { baseUrl: string; stop(): void };
  let run: any;
  let rows: any[];

  beforeAll(async () => {
    sim = await startSim(['--allow-fault-header', '--ttft-ms', '5', '--itl-ms', '2']);
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'faults',
      seed: 3,
      duration_s: 3,
      drain_timeout_s: 5,
      // Usage required, so a stream without it is a failure (test/no-usage.test.ts covers the default).
      target: { base_url: sim.baseUrl, api: 'chat', model: 'loadfleet-sim', timeout_s: 1.5, require_usage: true },
      classes: [
        {
          name: 'good',
          prompt: { input_tokens: 16, output_tokens: 8 },
          load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 2, rate_per_s: 3 }] },
        },
        ...Object.keys(FAULTS).map(faultClass),
      ],
    };
    const work = tempDir();
    const res = await runCoordinator(['--agents', '2', '--plan', writePlan(work, plan), '--out', join(work, 'out'), '--quiet']);
    expect(res.code, res.stderr).toBe(0);
    const dir = onlyRunDir(join(work, 'out'));
    run = readRunJson(dir);
    rows = readRequests(dir);
  });

  afterAll(() => sim?.stop());

  it('classifies every fault and keeps every request', () => {
    expect(rows).toHaveLength(6 * (Object.keys(FAULTS).length + 1));
    for (const [fault, status] of Object.entries(FAULTS)) {
      const got = rows.filter((r) => r.class === `f-${fault}`);
      expect(
        got.map((r) => r.status),
        fault,
      ).toEqual(Array(6).fill(status));
      for (const r of got) expect(r.error, fault).toBeTruthy();
    }
    expect(rows.filter((r) => r.class === 'good').every((r) => r.status === 'ok')).toBe(true);
  });

  it('records HTTP details of refusals (status, Retry-After, dropped reason)', () => {
    const r429 = rows.filter((r) => r.class === 'f-429');
    expect(r429.every((r) => r.http_status === 429 && r.retry_after_s === 1 && r.dropped_reason === 'queue-full')).toBe(true);
    expect(rows.filter((r) => r.class === 'f-5xx').every((r) => r.http_status >= 500)).toBe(true);
  });

  it('excludes failures from latency distributions and counts them', () => {
    expect(run.classes['f-429'].windows.all.ttft_samples).toBe(0);
    expect(run.classes['f-429'].windows.all.ttft_p95_ms).toBeNull();
    expect(run.classes['f-429'].http_429).toBe(6);
    expect(run.classes.good.windows.all.ttft_samples).toBe(6);
    expect(run.error_counts).toEqual({ http_error: 12, incomplete_stream: 12, malformed_stream: 6, missing_usage: 6, timeout: 6 });
    expect(run.status_counts['429']).toBe(6);
    expect(run.metric_population).toMatchObject({ attempted_requests: 48, successful_requests: 6, excluded_requests: 42 });
  });

  it('completes the run as degraded, with the reason', () => {
    expect(run.status).toBe('degraded');
    expect(run.status_reason).toMatch(/42 of 48 requests failed/);
  });
});
