// End to end: `coordinator experiment` with the real coordinator, agents and embedded engine-sim
// (simple engine, ~2 s runs): 2 arms × 2 repeats interleaved, the manifest, the run directories'
// tags, analysis.json; an experiment interrupted after its first run and resumed without redoing
// it; `coordinator analyze` rebuilding the same analysis; and an invalid experiment refused
// before any run starts.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXPERIMENT, EXPERIMENT_PLAN as PLAN } from './fixture-plans.js';
import { readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';

// The simple engine keeps each run to about 2 s of load; two agents exercise the merge.
const RUN_FLAGS = ['--agents', '2', '--sim-arg=--ttft-ms=20'];

function experiment(args: readonly string[]) {
  return startNode('coordinator/main.js', ['experiment', ...args]);
}

function onlyDir(out: string): string {
  const dirs = readdirSync(out);
  expect(dirs).toHaveLength(1);
  return join(out, dirs[0]!);
}

const readJson = (path: string): any => JSON.parse(readFileSync(path, 'utf8'));

describe('coordinator experiment', () => {
  let work: string;
  let file: string;

  beforeAll(() => {
    work = tempDir();
    writePlan(work, PLAN, 'plan.json');
    file = join(work, 'e.experiment.json');
    writeFileSync(file, JSON.stringify(EXPERIMENT));
  });

  it('runs arms × repeats interleaved, tags each run, and writes the manifest and analysis.json', async () => {
    const res = await experiment([
      file,
      '--out',
      join(work, 'out'),
      '--quiet',
      ...RUN_FLAGS,
      '--cost-per-hour',
      '10',
      '--accelerators',
      'sim:2',
    ]).done;
    expect(res.code, res.stderr).toBe(0);
    const dir = onlyDir(join(work, 'out'));
    const manifest = readJson(join(dir, 'manifest.json'));
    expect(manifest.runs.map((e: any) => `${e.arm}/${e.repeat}`)).toEqual(['rt only/1', 'rt with bulk/1', 'rt only/2', 'rt with bulk/2']);
    const starts = manifest.runs.map((e: any) => Date.parse(e.started_at));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    expect(readdirSync(join(dir, 'runs'))).toHaveLength(4);
    for (const e of manifest.runs) {
      expect(['completed', 'degraded']).toContain(e.status);
      const run = readRunJson(join(dir, e.run_dir));
      expect(run.experiment).toEqual({ name: 'e2e', arm: e.arm, repeat: e.repeat });
      expect(run.status).toBe(e.status);
      expect(Object.keys(run.classes)).toEqual(e.arm === 'rt only' ? ['rt'] : ['rt', 'bulk']);
    }

    const analysis = readJson(join(dir, 'analysis.json'));
    expect(analysis.schema).toBe('loadfleet.analysis/v1');
    expect(analysis.experiment).toBe('e2e');
    expect(analysis.run_count).toBe(4);
    expect(Object.keys(analysis.by_arm)).toEqual(['rt only', 'rt with bulk']);
    expect(Object.keys(analysis.comparison).slice(0, 2)).toEqual(['rt_p95_ttft_increase_ms', 'rt_p95_ttft_factor']);
    expect(analysis.runs.map((r: any) => r.run_dir).sort()).toEqual(manifest.runs.map((e: any) => e.run_dir).sort());
    // Validity is whatever the runs say; a run without the key never counts as valid.
    expect(analysis.all_data_quality_valid).toBe(analysis.runs.every((r: any) => r.data_quality_valid === true));
    for (const arm of ['rt only', 'rt with bulk']) {
      const s = analysis.by_arm[arm];
      expect(s.runs).toBe(2);
      // Each arm's median is the median of its own runs' p95 (two repeats: the mean of the two), never a pooled p95.
      const p95s = manifest.runs
        .filter((e: any) => e.arm === arm)
        .map((e: any) => readRunJson(join(dir, e.run_dir)).classes.rt.windows.surge.ttft_p95_ms as number);
      expect(s.rt_surge_p95_ttft_ms.min).toBe(Math.min(...p95s));
      expect(s.rt_surge_p95_ttft_ms.median).toBeCloseTo((p95s[0]! + p95s[1]!) / 2, 3);
      expect(s.repeat_spread.max_over_min).toBeCloseTo(Math.max(...p95s) / Math.min(...p95s), 3);
      expect(s.http_200_total).toBe(analysis.runs.filter((r: any) => r.arm === arm).reduce((a: number, r: any) => a + r.http_200, 0));
    }
    expect(analysis.by_arm['rt only'].bulk_surge_p95_ttft_ms).toEqual({ median: null, min: null, max: null });
    // The cost flags reach every run; each arm is one point of the Pareto front, at its medians.
    // (output_tok_s is written to 3 decimals, so the cost recomputed from it agrees to about 1e-5.)
    for (const r of analysis.runs)
      expect(Math.abs(r.usd_per_million_output_tokens / ((10 / (r.output_tok_s * 3600)) * 1e6) - 1)).toBeLessThan(1e-4);
    expect(analysis.pareto).toMatchObject({ x: 'output_tok_s_per_user', y: 'output_tok_s_per_accelerator', not_plotted: [] });
    for (const p of analysis.pareto.points) {
      expect(p.x).toBe(analysis.by_arm[p.label].output_tok_s_per_user.median);
      expect(p.y).toBe(analysis.by_arm[p.label].output_tok_s_per_accelerator.median);
    }
    expect(analysis.pareto.points.map((p: any) => p.label)).toEqual(['rt only', 'rt with bulk']);
    expect(analysis.answer).toMatch(/^At this tested load, rt median p95 TTFT in the surge window (in|de)creased from /);

    // analyze rebuilds the same document, from the experiment directory or from its run directories.
    const again = await startNode('coordinator/main.js', ['analyze', dir, '--out', join(work, 'again.json')]).done;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('rt only');
    expect(readJson(join(work, 'again.json'))).toEqual(analysis);
    const runDirs = manifest.runs.map((e: any) => join(dir, e.run_dir));
    const fromRuns = await startNode('coordinator/main.js', ['analyze', ...runDirs, '--out', join(work, 'from-runs.json')]).done;
    expect(fromRuns.code, fromRuns.stderr).toBe(0);
    expect(readJson(join(work, 'from-runs.json'))).toEqual(analysis);

    // Ordinary floats of 16+ digits (an unrounded gateway saturation) are read, not mistaken for big integers.
    for (const runDir of runDirs) {
      const path = join(runDir, 'run.json');
      writeFileSync(path, readFileSync(path, 'utf8').replace('{', '{\n  "pool_saturation_unrounded": 0.30000000000000004,'));
    }
    const floats = await startNode('coordinator/main.js', ['analyze', dir, '--out', join(work, 'floats.json')]).done;
    expect(floats.code, floats.stderr).toBe(0);
    expect(readJson(join(work, 'floats.json'))).toEqual(analysis);
    const report = await startNode('coordinator/main.js', ['report', dir]).done;
    expect(report.code, report.stderr).toBe(0);
  });

  it('an interrupted experiment resumes without redoing finished runs', async () => {
    const out = join(work, 'out2');
    const first = experiment([file, '--out', out, ...RUN_FLAGS]);
    // Ctrl-C once the first run has finished and the second has begun.
    // One pattern for both lines: they may arrive in one chunk.
    await waitFor(
      first.child.stderr!,
      /run 1\/4: arm "rt only" repeat 1 (completed|degraded)[^\n]*\n[\s\S]*run 2\/4: arm "rt with bulk" repeat 1\n/,
      90_000,
    );
    first.child.kill('SIGINT');
    const stopped = await first.done;
    expect(stopped.code, stopped.stderr).toBe(3);
    expect(stopped.stdout).toContain('--resume');
    const dir = onlyDir(out);
    expect(existsSync(join(dir, 'analysis.json'))).toBe(false);
    const before = readJson(join(dir, 'manifest.json'));
    expect(before.runs.map((e: any) => e.status)).toEqual([expect.stringMatching(/completed|degraded/), 'aborted', 'pending', 'pending']);
    expect(readRunJson(join(dir, before.runs[1].run_dir)).status).toBe('aborted');

    // --resume without a directory takes the newest one of this experiment under --out.
    const resumed = await experiment([file, '--out', out, '--resume', '--quiet', ...RUN_FLAGS]).done;
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = readJson(join(dir, 'manifest.json'));
    expect(after.runs[0]).toEqual(before.runs[0]); // not redone
    expect(after.runs[1].aborted_attempts).toEqual([{ run_dir: before.runs[1].run_dir, status_reason: before.runs[1].status_reason }]);
    expect(after.runs[1].run_dir).not.toBe(before.runs[1].run_dir);
    for (const e of after.runs) expect(['completed', 'degraded']).toContain(e.status);
    expect(readdirSync(join(dir, 'runs'))).toHaveLength(5); // 4 finished + the aborted one, kept
    const analysis = readJson(join(dir, 'analysis.json'));
    expect(analysis.run_count).toBe(4);
    expect(analysis.runs.map((r: any) => r.run_dir)).not.toContain(before.runs[1].run_dir);
  });

  // Two experiment directories of the same experiment compared arm against arm, by repeats.
  it('compares two experiment directories by their repeats of one arm', async () => {
    const a = onlyDir(join(work, 'out'));
    const b = onlyDir(join(work, 'out2'));
    const compare = (args: readonly string[]) => startNode('coordinator/main.js', ['compare', a, b, ...args]).done;
    const unnamed = await compare(['--out', join(work, 'cmp-none')]);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toMatch(/holds runs of arms rt only, rt with bulk: name one with --arm/);
    const r = await compare(['--arm', 'rt only', '--out', join(work, 'cmp')]);
    expect(r.code, r.stderr).toBe(0);
    const c = readJson(join(work, 'cmp', 'comparison.json'));
    expect(c.method).toBe('two-level-repeats');
    expect([c.baseline.runs.length, c.candidate.runs.length]).toEqual([2, 2]);
    const itl = c.classes.rt.all.find((f: any) => f.figure === 'itl_p95_ms');
    // Over repeats ITL has an interval too (from its per-run histogram figures' run-to-run variance).
    expect(itl.interval).not.toBeNull();
    expect(['regressed', 'improved', 'within_noise']).toContain(itl.verdict);
    expect(r.stdout).toMatch(/^compare \(two-level-repeats, 90% two-sided intervals: each end a one-sided 95% bound\)/);
  });

  it('refuses an invalid experiment before any run, listing every problem', async () => {
    const bad = join(work, 'bad.experiment.json');
    writeFileSync(
      bad,
      JSON.stringify({
        ...Object.fromEntries(Object.entries(EXPERIMENT).filter(([k]) => k !== 'repeats')),
        repeat: 2,
        plan: 'nope.json',
        arms: [{ name: 'rt only', classes: ['rtt'] }, { name: 'rt with bulk' }],
      }),
    );
    const res = await experiment([bad, '--out', join(work, 'out3'), ...RUN_FLAGS]).done;
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('error LF_EXPERIMENT_INVALID');
    expect(res.stderr).toContain('repeat: unknown key (did you mean "repeats"?)');
    expect(res.stderr).toContain('repeats: is required');
    expect(res.stderr).toContain('plan: cannot read "nope.json"');
    expect(existsSync(join(work, 'out3'))).toBe(false);

    // With the plan found, an unknown class is named with the plan's classes.
    writeFileSync(
      bad,
      JSON.stringify({ ...EXPERIMENT, arms: [{ name: 'rt only', classes: ['rtt'], colour: 1 }, { name: 'rt with bulk' }] }),
    );
    const res2 = await experiment([bad, '--out', join(work, 'out3'), ...RUN_FLAGS]).done;
    expect(res2.code).toBe(2);
    expect(res2.stderr).toContain('arms[0].colour: unknown key');
    expect(res2.stderr).toContain('arms[0].classes[0]: unknown class "rtt" (the plan has "rt", "bulk") (did you mean "rt"?)');
    expect(existsSync(join(work, 'out3'))).toBe(false);
  });
});
