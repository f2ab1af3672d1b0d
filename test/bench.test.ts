// suite: alone
// (Alone: every suite runs CPU-bound loops that would move a neighbour's timing.)
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
] as const;

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

/** What one suite's quick run says beyond its figures and verdict. */
const SUITE_CHECKS: Partial<Record<(typeof SUITES)[number], (suite: any) => void>> = {
  // A quick run is too small to judge the goals set at full size.
  coordinator_memory: (suite) => {
    expect(suite.goal_met).toBeNull();
    expect(suite.spill_check.identical).toBe(true);
  },
  workers: (suite) => expect(suite.goal_not_judged_why).toMatch(/--quick/),
  // The agent's cost split: each load's clients measured at once, per request and per token (a
  // quick run measures only 1-token answers).
  agent_hot_path: (suite) => {
    expect(suite.cost_split.goal_load).toBeNull();
    expect(suite.cost_split.per_chunk).toBeNull();
    const side = suite.cost_split.per_request;
    expect(side.loadfleet_agent.responses).toBeGreaterThan(0);
    expect(side.loadfleet_agent.cpu_us_per_token).toBeGreaterThan(0);
    expect(side.bare_undici.cpu_us_per_token).toBeGreaterThan(0);
    expect(side.ratio_vs_bare_undici).toBeGreaterThan(0);
  },
};

describe('npm run bench -- --quick', () => {
  // One suite a test (`--only`), each under the two-minute bound: every suite's CPU-bound loops in
  // one test took 179 s alone on the quiet 2-core machine and 224 s beside another file (2026-12-07).
  it.each(SUITES)('%s runs, with its figures, a goal_met verdict and a table row', async (name) => {
    const r = await runBench(['--quick', '--only', name]);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.schema).toBe('loadfleet.bench/v1');
    expect(doc.quick).toBe(true);
    expect(Object.keys(doc.suite_seconds)).toEqual([name]);
    const suite = doc[name];
    expect(suite.error, `${name}: ${suite.error}`).toBeUndefined();
    expect(suite).toHaveProperty('goal_met');
    expect([true, false, null]).toContain(suite.goal_met);
    expect(r.stderr).toMatch(new RegExp(`^${name} `, 'm'));
    SUITE_CHECKS[name]?.(suite);
  });

  it('refuses an unknown suite by name, listing the suites', async () => {
    const r = await runBench(['--only', 'nope']);
    expect(r.code).toBe(2);
    // The list above is the whole bench: a suite added there is tested here.
    expect(r.stderr).toContain(`unknown suite nope; suites: ${SUITES.join(', ')}`);
  });
});
