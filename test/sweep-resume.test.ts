// suite: timing
// A sweep whose coordinator is SIGKILLed in the middle of its second stage, restarted with the same
// `coordinator sweep` command on the same --out: the first stage's directory is kept untouched, the
// second is recovered from its journal (the two standing --stay agents rejoin within their grace
// and resend what was not durable: every planned request once), the third is run, and sweep.json
// ends completed as if the sweep had not stopped, naming the recovered stage and the outage.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeSweep } from './fixture-plans.js';
import { freePort, readRequests, readRunJson, startNode, startSim, tempDir, waitFor } from './harness.js';

const TOKEN = { LOADFLEET_TOKEN: 'sweep-resume-token' };
const STAGE_S = 6;
const VALUES = [2, 3, 4];

function readSweep(out: string): any {
  const [dir] = readdirSync(out);
  return { ...JSON.parse(readFileSync(join(out, dir!, 'sweep.json'), 'utf8')), dir: join(out, dir!) };
}

function digest(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isFile()) out[name] = `${createHash('sha256').update(readFileSync(p)).digest('hex')} ${statSync(p).mtimeMs}`;
  }
  return out;
}

// Every request of the stage's plan once: the indices run 0..n−1 without a gap or a repeat, and
// n is what the stage's constant rate schedules over its length.
function expectEveryRequestOnce(runDir: string, value: number): void {
  const indices = readRequests(runDir)
    .filter((r) => r.class === 'rt')
    .map((r) => Number(r.request_index))
    .sort((a, b) => a - b);
  expect(indices).toEqual(Array.from({ length: STAGE_S * value }, (_, i) => i));
}

describe('a sweep whose coordinator is killed mid-stage', () => {
  const stops: (() => void)[] = [];
  afterAll(() => {
    for (const s of stops) s();
  });

  it('restarted on the same --out: stage 1 kept, stage 2 recovered with every request once, stage 3 run, sweep.json complete', async () => {
    const work = tempDir();
    const sim = await startSim(['--ttft-ms', '10', '--itl-ms', '4']);
    stops.push(sim.stop);
    const file = writeSweep(work, { strategy: { type: 'stages', values: VALUES }, stage_duration_s: STAGE_S, warmup_s: 1 }, sim.baseUrl);
    const out = join(work, 'out');
    const port = await freePort();
    const args = ['sweep', file, '--agents', '2', '--agent-grace-s', '30', '--listen', `127.0.0.1:${port}`, '--out', out];
    const first = startNode('coordinator/main.js', args, TOKEN);
    const [, url] = await waitFor(first.child.stderr!, /waiting for \d+ agent\(s\) at (wss?:\/\/[\d.:]+)/);
    const agents = ['s1', 's2'].map((id) =>
      startNode('agent/main.js', ['--coordinator', url!, '--id', id, '--spool-dir', join(work, 'spool'), '--stay'], TOKEN),
    );
    for (const a of agents) stops.push(() => a.child.kill('SIGTERM'));
    await waitFor(first.child.stderr!, /stage 2: rt at 3/, 60_000);
    await waitFor(first.child.stderr!, /t=3s/, 30_000);
    first.child.kill('SIGKILL');
    expect((await first.done).code).toBeNull();
    const killed = readSweep(out);
    expect(killed.status).toBe('running');
    expect(killed.stages).toHaveLength(1);
    const stage1 = killed.stages[0].run_dir;
    const before = digest(stage1);
    const stageDirs = readdirSync(join(killed.dir, 'stages')).sort();
    expect(stageDirs).toHaveLength(2);
    const stage2 = join(killed.dir, 'stages', stageDirs[1]!);
    expect(existsSync(join(stage2, 'journal', 'run.journal'))).toBe(true);

    const t0 = Date.now();
    const again = await startNode('coordinator/main.js', args, TOKEN).done;
    const restartS = (Date.now() - t0) / 1000;
    for (const a of agents) a.child.kill('SIGTERM');
    await Promise.all(agents.map((a) => a.done));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('was not finished (its coordinator is gone): taking it up at the stage it was in');
    expect(again.stderr).toContain('stage 2 was under way when the coordinator stopped: recovering');

    const s = readSweep(out);
    expect(readdirSync(out)).toHaveLength(1);
    expect(s.status).toBe('completed');
    expect(s.stop_rule).toBe('done');
    expect(s.stages.map((x: any) => x.value)).toEqual(VALUES);
    expect(s.stages.map((x: any) => x.index)).toEqual([0, 1, 2]);
    expect(s.stages.map((x: any) => x.verdict)).toEqual(['pass', 'pass', 'pass']);
    // Stage 1 as it was: not run again, not rewritten.
    expect(s.stages[0].run_dir).toBe(stage1);
    expect(digest(stage1)).toEqual(before);
    // Stage 2 recovered in its own directory, marked so, with the outage.
    expect(s.stages[1].run_dir).toBe(stage2);
    expect(s.resumed).toHaveLength(1);
    expect(s.resumed[0]).toMatchObject({ stage_index: 1, run_dir: stage2, how: 'recovered' });
    expect(s.resumed[0].outage_s).toBeGreaterThan(0);
    expect(s.definitions.resumed).toBeTruthy();
    const run2 = readRunJson(stage2);
    expect(run2.recovered).toBeDefined();
    expect(run2.recovered.during_load).toBe(true);
    expect(existsSync(join(stage2, 'journal'))).toBe(false);
    expectEveryRequestOnce(stage2, VALUES[1]!);
    // Stage 3 run by the restarted coordinator, on the same agents.
    expect(readdirSync(join(s.dir, 'stages'))).toHaveLength(3);
    const run3 = readRunJson(s.stages[2].run_dir);
    expect(run3.recovered).toBeUndefined();
    expectEveryRequestOnce(s.stages[2].run_dir, VALUES[2]!);
    console.log(
      `sweep resume: outage ${s.resumed[0].outage_s.toFixed(2)} s (journal's last write to restart), recovered stage down_from_s ${run2.recovered.down_from_s} restarted_at_s ${run2.recovered.restarted_at_s}, replayed ${run2.recovered.replayed_messages} messages; restarted coordinator ran ${restartS.toFixed(1)} s`,
    );
  }, 180_000);
});
