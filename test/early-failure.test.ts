// A run that fails before any load keeps its evidence: run.json with status "failed", the error
// with its code, the plan as resolved so far and where each agent had got to.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constantRatePlan, onlyRunDir, readRunJson, runCoordinator, startSim, tempDir, writePlan } from './harness.js';

describe('a run that fails before any load', () => {
  let sim: { baseUrl: string; stop(): void };
  beforeAll(async () => {
    sim = await startSim(['--ttft-ms', '5']);
  });
  afterAll(() => sim?.stop());

  it('writes run.json with status failed when the agents cannot prepare', async () => {
    const work = tempDir();
    const plan = {
      ...constantRatePlan('early', 1, 2),
      target: { base_url: sim.baseUrl, api: 'chat' as const, model: 'loadfleet-sim', timeout_s: 5, api_key_env: 'LF_TEST_KEY_NOT_SET' },
    };
    const env = { ...process.env };
    delete env.LF_TEST_KEY_NOT_SET;
    const res = await runCoordinator(
      ['--agents', '2', '--plan', writePlan(work, plan), '--out', join(work, 'out'), '--quiet'],
      env as Record<string, string>,
    );
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toMatch(/LF_AGENT_FAILED/);
    const run = readRunJson(onlyRunDir(join(work, 'out')));
    expect(run).toMatchObject({ schema: 'loadfleet.run/v1', status: 'failed', requests: 0, error: { code: 'LF_AGENT_FAILED' } });
    expect(run.status_reason).toMatch(/could not prepare: .*LF_TEST_KEY_NOT_SET/);
    expect(run.agents).toHaveLength(2);
    expect(run.agents.map((a: any) => a.state)).toContain('failed');
    for (const a of run.agents.filter((x: any) => x.state === 'failed')) expect(a.detail).toMatch(/LF_TEST_KEY_NOT_SET/);
    // The plan as far as it was resolved: its prompts had been calibrated on the target.
    expect(run.plan.prompt_calibration.rt.method).toBe('server-tokenize');
    expect(Object.keys(run.field_definitions)).toEqual(expect.arrayContaining(['status', 'error', 'agents[].state']));
  });
});
