// A coordinator restarted with the same arguments, as a Kubernetes Job's retry or a systemd
// restart does: `coordinator experiment FILE --resume` starts the experiment when no directory
// exists yet, and after a hard kill (SIGKILL: no clean-up, the run in progress never finishes)
// the next attempt continues it without redoing what finished.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXPERIMENT, EXPERIMENT_PLAN as PLAN } from './fixture-plans.js';
import { startNode, tempDir, waitFor, writePlan } from './harness.js';

const readJson = (path: string): any => JSON.parse(readFileSync(path, 'utf8'));

describe('a restarted experiment coordinator', () => {
  it('--resume starts the experiment, then continues it after the coordinator was killed', async () => {
    const work = tempDir();
    writePlan(work, PLAN, 'plan.json');
    const file = join(work, 'e.experiment.json');
    writeFileSync(file, JSON.stringify(EXPERIMENT));
    const out = join(work, 'out');
    // The same arguments on every attempt, like a Job's pod template.
    const attempt = () =>
      startNode('coordinator/main.js', ['experiment', file, '--out', out, '--resume', '--agents', '2', '--sim-arg=--ttft-ms=20']);

    const first = attempt();
    await waitFor(first.child.stderr!, /no directory of experiment e2e under .* yet: starting one/);
    await waitFor(first.child.stderr!, /run 1\/4: arm "rt only" repeat 1 (completed|degraded)[^\n]*\n[\s\S]*run 2\/4/, 90_000);
    first.child.kill('SIGKILL');
    await first.done;
    const dirs = readdirSync(out);
    expect(dirs).toHaveLength(1);
    const dir = join(out, dirs[0]!);
    const before = readJson(join(dir, 'manifest.json'));
    expect(before.runs[0].status).toMatch(/completed|degraded/);

    const second = await attempt().done;
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/1 of 4 runs already finished/);
    expect(readdirSync(out), 'the same directory, continued').toEqual(dirs);
    const after = readJson(join(dir, 'manifest.json'));
    expect(after.runs[0]).toEqual(before.runs[0]);
    for (const e of after.runs) expect(['completed', 'degraded']).toContain(e.status);
    expect(readJson(join(dir, 'analysis.json')).run_count).toBe(4);
  }, 120_000);
});
