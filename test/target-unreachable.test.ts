// The target proven reachable from the agents before any load: each agent's warm-up goes to the
// coordinator, and a plan whose target nothing answers is refused before a single request, with
// each agent's own error (real coordinator and agent processes; the port is closed on loopback).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { constantRatePlan, freePort, onlyRunDir, readRunJson, runCoordinator, startSim, tempDir, writePlan } from './harness.js';

describe('a target the agents cannot reach', () => {
  it('is refused before any load with LF_TARGET_UNREACHABLE and each agent’s error, beyond --max-agent-loss', async () => {
    const work = tempDir();
    const port = await freePort(); // bound and released: nothing listens there
    const plan = {
      ...constantRatePlan('unreachable', 2, 5),
      target: { base_url: `http://127.0.0.1:${port}/v1`, api: 'chat' as const, model: 'm', timeout_s: 5 },
    };
    const started = Date.now();
    const res = await runCoordinator([
      '--agents',
      '2',
      '--max-agent-loss',
      '1',
      '--plan',
      writePlan(work, plan),
      '--out',
      join(work, 'out'),
      '--quiet',
    ]);
    const ms = Date.now() - started;
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toMatch(/error LF_TARGET_UNREACHABLE: 2 of 2 agents cannot reach the target \(--max-agent-loss 1\)/);
    // One detail line per agent, each with the system's own words for it.
    const details = res.stderr.split('\n').filter((l) => /^ {2}\S+ \(.*\): GET http:\/\/127\.0\.0\.1:\d+\/v1\/models: /.test(l));
    expect(details, res.stderr).toHaveLength(2);
    for (const d of details) expect(d).toMatch(/ECONNREFUSED/);
    const run = readRunJson(onlyRunDir(join(work, 'out')));
    expect(run).toMatchObject({ status: 'failed', requests: 0, error: { code: 'LF_TARGET_UNREACHABLE' } });
    expect(run.agents).toHaveLength(2);
    for (const a of run.agents) expect(a.detail).toMatch(/^LF_TARGET_UNREACHABLE: GET .*\/v1\/models: .*ECONNREFUSED/);
    expect(ms, 'refused at the warm-up, not after a run of failed requests').toBeLessThan(30_000);
  });

  it('a reachable target: each agent’s warm-up is in run.json (status, latency) and the run goes on', async () => {
    const sim = await startSim(['--ttft-ms', '5']);
    try {
      const work = tempDir();
      const plan = {
        ...constantRatePlan('reachable', 1, 4),
        target: { base_url: sim.baseUrl, api: 'chat' as const, model: 'loadfleet-sim' },
      };
      const res = await runCoordinator(['--agents', '2', '--plan', writePlan(work, plan), '--out', join(work, 'out'), '--quiet']);
      expect(res.code, res.stderr).toBe(0);
      const run = readRunJson(onlyRunDir(join(work, 'out')));
      expect(run.agents).toHaveLength(2);
      for (const a of run.agents) {
        expect(a.warm_up).toMatchObject({ url: `${sim.baseUrl}/models`, status: 200, error: null });
        expect(a.warm_up.latency_ms).toBeGreaterThan(0);
        expect(a.warm_up.latency_ms).toBeLessThan(15_000);
      }
    } finally {
      sim.stop();
    }
  });
});
