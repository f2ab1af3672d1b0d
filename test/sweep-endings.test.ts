// `coordinator sweep` end to end, how a sweep ends early: its endpoint dying, Ctrl-C, and an
// invalid sweep file refused before any load. None of these judges a stage near the capacity, so
// they run beside other files (the capacity tests are in sweep.test.ts).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { capacityPlan, SIM_ARGS, writeSweep } from './fixture-plans.js';
import { startNode, startSim, tempDir, writePlan } from './harness.js';

function runSweep(file: string, out: string, extra: string[] = []) {
  return startNode('coordinator/main.js', ['sweep', file, '--agents', '2', '--out', out, '--quiet', ...SIM_ARGS, ...extra]);
}

function readSweep(out: string): any {
  const [dir] = readdirSync(out);
  return { ...JSON.parse(readFileSync(join(out, dir!, 'sweep.json'), 'utf8')), dir: join(out, dir!) };
}

describe('coordinator sweep ends', () => {
  it('an endpoint that dies mid-sweep ends it with the stages so far and the reason', async () => {
    const dir = tempDir();
    const sim = await startSim(['--engine', 'simple', '--ttft-ms', '50', '--itl-ms', '10']);
    const file = writeSweep(dir, { strategy: { type: 'stages', values: [1, 2, 3] } }, sim.baseUrl);
    const out = join(dir, 'out');
    const run = runSweep(file, out);
    // Kill the endpoint once the first stage is in sweep.json.
    const poll = setInterval(() => {
      try {
        if (readSweep(out).stages.length >= 1) {
          sim.stop();
          clearInterval(poll);
        }
      } catch {}
    }, 200);
    const done = await run.done;
    clearInterval(poll);
    sim.stop();
    expect(done.code, done.stderr).toBe(3);
    const s = readSweep(out);
    expect(s.status).toBe('aborted');
    expect(s.stop_rule).toBe('endpoint_failed');
    expect(s.stop_reason).toMatch(/did not answer/);
    expect(s.stages[0]).toMatchObject({ value: 1, verdict: 'pass' });
  });

  it('Ctrl-C writes what was measured', async () => {
    const dir = tempDir();
    const file = writeSweep(dir, { strategy: { type: 'stages', values: [1, 2, 3] } });
    const out = join(dir, 'out');
    const run = runSweep(file, out);
    const poll = setInterval(() => {
      try {
        if (readSweep(out).stages.length >= 1) {
          clearInterval(poll);
          setTimeout(() => run.child.kill('SIGINT'), 2500); // inside stage 2
        }
      } catch {}
    }, 200);
    const done = await run.done;
    clearInterval(poll);
    expect(done.code).toBe(3);
    const s = readSweep(out);
    expect(s.status).toBe('interrupted');
    expect(s.stages.map((x: any) => x.verdict)).toEqual(['pass', 'error']);
    expect(s.stages[1].reason).toMatch(/interrupted/);
    expect(s.capacity).toBe(1);
    expect(existsSync(join(s.dir, 'report.html'))).toBe(true);
  });

  it('an invalid sweep file fails before any load, listing every problem', async () => {
    const dir = tempDir();
    writePlan(dir, capacityPlan());
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        schema: 'loadfleet.sweep/v1',
        name: 'x',
        plan: 'plan.json',
        class: 'rt',
        scale: 'rte',
        strategy: { type: 'bisect', pass: 4, fail: 2, resolution: 1 },
        stage_duration_s: 5,
        warmup_s: 9,
      }),
    );
    const done = await startNode('coordinator/main.js', ['sweep', file, '--out', join(dir, 'out')]).done;
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('error LF_SWEEP_INVALID');
    expect(done.stderr).toContain('scale: must be one of "rate", "concurrency", "speed"');
    expect(done.stderr).toContain('warmup_s: must be < stage_duration_s (5), or nothing is measured');
    expect(done.stderr).toContain('strategy.fail: must be > pass (4)');
    expect(existsSync(join(dir, 'out'))).toBe(false);
    // A class the plan lacks is found too, still before any load.
    writeFileSync(
      file,
      JSON.stringify({
        schema: 'loadfleet.sweep/v1',
        name: 'x',
        plan: 'plan.json',
        class: 'nope',
        scale: 'rate',
        strategy: { type: 'stages', values: [1] },
        stage_duration_s: 5,
        warmup_s: 1,
      }),
    );
    const again = await startNode('coordinator/main.js', ['sweep', file, '--out', join(dir, 'out')]).done;
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('class: no class "nope" in plan plan.json (it has "rt")');
  });
});
