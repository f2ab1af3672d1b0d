// Request canaries end to end: each prompt carries its own marker and asks the model to begin its
// answer with it; engine-sim honours that, and its `canary` fault answers with another request's
// marker, which must fail exactly those requests (closed), keeping their timings out of the figures.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan, TrafficClass } from '../shared/plan.js';
import { onlyRunDir, readRequests, readRunJson, runCoordinator, startSim, tempDir, writePlan } from './harness.js';

function canaryClass(name: string, headers: Record<string, string>): TrafficClass {
  return {
    name,
    headers,
    prompt: { input_tokens: 48, output_tokens: 6, canary: true },
    load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 2, rate_per_s: 5 }] },
  };
}

describe('request canaries', () => {
  let sim: { baseUrl: string; stop(): void };
  let run: any;
  let rows: any[];

  beforeAll(async () => {
    sim = await startSim(['--allow-fault-header', '--reasoning-tokens', '2', '--ttft-ms', '5', '--itl-ms', '2']);
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'canary',
      seed: 11,
      duration_s: 2,
      drain_timeout_s: 5,
      target: { base_url: sim.baseUrl, api: 'chat', model: 'loadfleet-sim', timeout_s: 5 },
      classes: [canaryClass('honest', { 'x-sim-fault': 'none' }), canaryClass('crossed', { 'x-sim-fault': 'canary' })],
    };
    const work = tempDir();
    const res = await runCoordinator(['--agents', '2', '--plan', writePlan(work, plan), '--out', join(work, 'out'), '--quiet']);
    expect(res.code, res.stderr).toBe(0);
    const dir = onlyRunDir(join(work, 'out'));
    run = readRunJson(dir);
    rows = readRequests(dir);
  });
  afterAll(() => sim?.stop());

  it('passes every response that begins with its own marker', () => {
    const honest = rows.filter((r) => r.class === 'honest');
    expect(honest).toHaveLength(10);
    for (const r of honest) {
      expect(r.status).toBe('ok');
      expect(r.request_canary).toMatchObject({ passed: true, marker_at_start: true, observed_marker_count: 1, foreign_marker_count: 0 });
      expect(r.request_canary.marker).toMatch(new RegExp(`^[A-Z]{4}_REQ_11_${String(r.request_index).padStart(5, '0')}$`));
      // The marker and the instruction were counted at calibration: the prompt is still exactly 48 tokens.
      expect(r.prompt_tokens).toBe(48);
    }
  });

  it('fails exactly the responses that carry another request marker, keeping their timings out of the figures', () => {
    const crossed = rows.filter((r) => r.class === 'crossed');
    expect(crossed).toHaveLength(10);
    for (const r of crossed) {
      expect(r.status).toBe('canary_failed');
      expect(r.request_canary).toMatchObject({ passed: false, marker_at_start: false, foreign_marker_count: 1 });
      expect(r.error).toMatch(/1 other request marker/);
      expect(r.first_content_unix_ns).not.toBeNull(); // timings kept in the row
    }
    expect(run.classes.crossed.windows.all.ttft_samples).toBe(0);
    expect(run.classes.honest.windows.all.ttft_samples).toBe(10);
    expect(run).toMatchObject({ request_canary_samples: 20, request_canary_passed: 10 });
    expect(run.classes.honest).toMatchObject({ request_canary_samples: 10, request_canary_passed: 10 });
    expect(run.error_counts).toEqual({ canary_failed: 10 });
    const check = run.data_quality.checks.find((c: any) => c.name === 'request_canaries');
    expect(check).toMatchObject({ status: 'fail', reason: 'crossed: 10 of 10 canaries failed' });
    // A failed canary is a clean stream with the wrong words, not a broken stream.
    expect(run.data_quality.checks.find((c: any) => c.name === 'stream_integrity').status).toBe('pass');
    expect(run.timing_methodology.request_canaries).toMatch(/fails closed/);
  });
});
