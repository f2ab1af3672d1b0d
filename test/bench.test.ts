// The benchmark harness, as CI can run it: `npm run bench -- --quick` (tiny loads). It checks that
// every suite runs and states its figures and its goal verdict, never the numbers themselves
// (benchmarks are not timed tests; the machine is shared and noisy).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { distPath } from './harness.js';

const SUITES = [
  'agent_hot_path',
  'timing_accuracy',
  'schedule_fidelity',
  'scale',
  'workers',
  'coordinator_ingest',
  'coordinator_memory',
  'engine_sim',
  'long_context',
  'self_test',
];

function runBench(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [distPath('bench/main.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run bench -- --quick', () => {
  it('runs every suite, each with its figures, a goal_met verdict and a table row', async () => {
    const r = await runBench(['--quick']);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.schema).toBe('loadfleet.bench/v1');
    expect(doc.quick).toBe(true);
    expect(Object.keys(doc.suite_seconds)).toEqual(SUITES);
    for (const name of SUITES) {
      const suite = doc[name];
      expect(suite.error, `${name}: ${suite.error}`).toBeUndefined();
      expect(suite, name).toHaveProperty('goal_met');
      expect([true, false, null], name).toContain(suite.goal_met);
      expect(r.stderr, name).toMatch(new RegExp(`^${name} `, 'm'));
    }
    // A quick run is too small to judge the goals set at full size.
    expect(doc.coordinator_memory.goal_met).toBeNull();
    expect(doc.coordinator_memory.spill_check.identical).toBe(true);
    expect(doc.workers.goal_not_judged_why).toMatch(/--quick/);
    // The agent's cost split: each load's clients measured at once, per request and per token (a
    // quick run measures only 1-token answers).
    expect(doc.agent_hot_path.cost_split.goal_load).toBeNull();
    expect(doc.agent_hot_path.cost_split.per_chunk).toBeNull();
    for (const load of ['per_request']) {
      const side = doc.agent_hot_path.cost_split[load];
      expect(side.loadfleet_agent.responses, load).toBeGreaterThan(0);
      expect(side.loadfleet_agent.cpu_us_per_token, load).toBeGreaterThan(0);
      expect(side.bare_undici.cpu_us_per_token, load).toBeGreaterThan(0);
      expect(side.ratio_vs_bare_undici, load).toBeGreaterThan(0);
    }
    // Every suite runs its CPU-bound loops: 179 s alone on the quiet 2-core machine and 224 s beside
    // another file (2026-12-07, before the quick journal comparison went to one round): past the
    // e2e default of 120 s.
  }, 300_000);

  it('refuses an unknown suite by name, listing the suites', async () => {
    const r = await runBench(['--only', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown suite nope; suites: agent_hot_path, /);
  });
});
