// Which sweep directory a restarted `coordinator sweep` takes up, and a stage under way that left
// nothing to recover (no journal, no run.json): run again, and sweep.json says so.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../shared/plan.js';
import type { Sweep } from '../../shared/sweep.js';
import type { LoadedSweep } from '../../shared/sweep-load.js';
import { stateOf, takeUpStages, unfinishedSweep } from './resume-sweep.js';
import { sweepDocument } from './sweep-json.js';

const sweep: Sweep = {
  schema: 'loadfleet.sweep/v1',
  name: 'cap',
  plan: 'plan.json',
  class: 'rt',
  scale: 'rate',
  strategy: { type: 'stages', values: [1, 2, 3] },
  stage_duration_s: 6,
  warmup_s: 1,
};
const plan = {
  schema: 'loadfleet.plan/v1',
  name: 'cap',
  seed: 1,
  duration_s: 6,
  classes: [
    {
      name: 'rt',
      prompt: { input_tokens: 10, output_tokens: 4 },
      load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 6, rate_per_s: 1 }] },
    },
  ],
} as unknown as Plan;
const loaded: LoadedSweep = { sweep, plan, planPath: '/x/plan.json' };

// A pid that was this host's and is gone: a child that has exited.
const deadPid = spawnSync(process.execPath, ['-e', '0']).pid!;

function sweepDir(out: string, name: string, doc: Record<string, unknown>): string {
  const dir = join(out, name);
  mkdirSync(join(dir, 'stages'), { recursive: true });
  // What the writer writes for a running sweep with no stage yet (a restart reads it through its published shape).
  const base = sweepDocument({
    sweepId: name,
    sweep,
    sweepFile: '/x/sweep.json',
    planFile: '/x/plan.json',
    background: [],
    slo: {},
    agents: 1,
    startedAt: new Date(0),
    finishedAt: null,
    stages: [],
    stop: null,
    coordinator: { host: hostname(), pid: deadPid },
    resumed: [],
  });
  writeFileSync(join(dir, 'sweep.json'), JSON.stringify({ ...base, ...doc }));
  return dir;
}

describe('taking a sweep up', () => {
  it('takes up only a running sweep of the same file and definition whose coordinator is gone', async () => {
    // A live coordinator: another process of this host, running since before the sweep.json (this very process would read as a restarted one).
    const out = mkdtempSync(join(tmpdir(), 'lf-sweep-resume-'));
    sweepDir(out, 'a-done', { status: 'completed' });
    sweepDir(out, 'b-live', { coordinator: { host: hostname(), pid: process.ppid } });
    sweepDir(out, 'c-other', { sweep: { ...sweep, stage_duration_s: 7 } });
    sweepDir(out, 'd-elsewhere', { coordinator: { host: 'another-host', pid: deadPid } });
    expect(await unfinishedSweep(out, loaded, '/x/sweep.json')).toBeNull();
    const mine = sweepDir(out, '0-mine', {});
    expect(await unfinishedSweep(out, loaded, '/x/sweep.json')).toBe(mine);
    expect(await unfinishedSweep(out, loaded, '/x/another.json')).toBeNull();
  });

  it('a stage directory with neither journal nor run.json is run again, and resumed says so', async () => {
    const out = mkdtempSync(join(tmpdir(), 'lf-sweep-resume-'));
    const dir = sweepDir(out, 's', {});
    mkdirSync(join(dir, 'stages', 'stage1-left'));
    const state = await stateOf(dir, loaded, 2);
    expect(state.coordinator).toEqual({ host: hostname(), pid: process.pid });
    const said: string[] = [];
    let saved = 0;
    await takeUpStages(
      dir,
      state,
      loaded,
      {} as never,
      (l) => said.push(l),
      async () => void saved++,
    );
    expect(state.stages).toEqual([]);
    expect(state.resumed).toMatchObject([{ stage_index: 0, run_dir: join(dir, 'stages', 'stage1-left'), how: 'rerun', outage_s: null }]);
    expect(said.join('\n')).toContain('has no journal and no run.json: it is run again');
    expect(saved).toBe(1);
    // Taken up again later, that directory is not considered a second time.
    said.length = 0;
    await takeUpStages(
      dir,
      state,
      loaded,
      {} as never,
      (l) => said.push(l),
      async () => {},
    );
    expect(said).toEqual([]);
  });
});
