// One fleet, many runs, end to end, where no figure is judged on time: an experiment whose every run
// is served by both separately started agents, a second agent under a connected id refused, and a
// --stay agent that outlives its coordinator and serves the next one. Real coordinator, agent and
// engine-sim processes on loopback; the sweeps and the link cut are in fleet.test.ts.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXPERIMENT, EXPERIMENT_PLAN } from './fixture-plans.js';
import { agent, listening, onlyDir, readJson, stderrOf, TOKEN, until } from './fleet-kit.js';
import { constantRatePlan, freePort, readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';

describe('one fleet, many runs, untimed', () => {
  it('an experiment (2 arms × 2 repeats) runs every run on both remote agents', async () => {
    const dir = tempDir();
    writePlan(dir, EXPERIMENT_PLAN);
    const file = join(dir, 'e.experiment.json');
    writeFileSync(file, JSON.stringify(EXPERIMENT));
    const { coord, url } = await listening(['experiment', file, '--agents', '2', '--out', join(dir, 'out'), '--sim-arg=--ttft-ms=20']);
    const agents = ['host-a', 'host-b'].map((id) => agent(url, id, join(dir, `spool-${id}`)));
    const res = await coord.done;
    expect(res.code, res.stderr).toBe(0);
    for (const a of agents) {
      const done = await a.done;
      expect(done.code).toBe(0);
      // Four runs on one link: each run handled and acknowledged its messages once (no earlier
      // run's handler still listening, so no ack came twice for a sequence number).
      const handed = [...done.stderr.matchAll(/handed over \((\d+) acks, (\d+) repeated\)/g)];
      expect(handed, done.stderr).toHaveLength(4);
      for (const [, acks, repeated] of handed) {
        expect(Number(acks)).toBeGreaterThan(0);
        expect(Number(repeated)).toBe(0);
      }
    }
    const analysis = readJson(join(onlyDir(join(dir, 'out')), 'analysis.json'));
    expect(analysis.runs).toHaveLength(4);
    for (const row of analysis.runs) expect(row.agents.split(',').sort()).toEqual(['host-a', 'host-b']);
    expect(analysis.definitions['runs[].agents']).toBeTruthy();
  });

  it('refuses a second agent under a connected id with a clear error, exit 2', async () => {
    const dir = tempDir();
    const plan = writePlan(dir, constantRatePlan('dup', 2, 5));
    const { coord, url } = await listening(['start', '--agents', '2', '--plan', plan, '--out', join(dir, 'out')]);
    const coordSaid = stderrOf(coord);
    const first = agent(url, 'twin', join(dir, 'spool-1'));
    await until(coordSaid, /agent twin joined/, 30_000);
    const second = await agent(url, 'twin', join(dir, 'spool-2')).done;
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/LF_DUPLICATE_AGENT: .*agent id twin is already connected/);
    const other = agent(url, 'other', join(dir, 'spool-3'));
    const [res, f, o] = await Promise.all([coord.done, first.done, other.done]);
    expect(res.code, res.stderr).toBe(0);
    expect([f.code, o.code]).toEqual([0, 0]);
    expect(readRunJson(onlyDir(join(dir, 'out'))).requests).toBe(10);
  });

  it('a --stay agent stops its load when its coordinator dies, then serves the next coordinator', async () => {
    const dir = tempDir();
    const long = writePlan(dir, constantRatePlan('long', 30, 5), 'long.json');
    const short = writePlan(dir, constantRatePlan('short', 2, 5), 'short.json');
    const port = String(await freePort());
    const coordinator = (plan: string) =>
      startNode(
        'coordinator/main.js',
        ['start', '--listen', `127.0.0.1:${port}`, '--agents', '1', '--agent-grace-s', '3', '--plan', plan, '--out', join(dir, 'out')],
        TOKEN,
      );
    const first = coordinator(long);
    const stayer = agent(`ws://127.0.0.1:${port}`, 'stayer', join(dir, 'spool'), ['--stay']);
    const said = stderrOf(stayer);
    await waitFor(first.child.stderr!, /t=2s/, 60_000);
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await until(said, /stopping the load/, 30_000);
    // The coordinator's grace (3 s, told to the agent with the run) bounds how long load goes on.
    expect(Date.now() - killedAt).toBeLessThan(3000 + 3000);
    await until(said, /waiting for the next coordinator/, 30_000);
    const second = coordinator(short);
    const res = await second.done;
    expect(res.code, res.stderr).toBe(0);
    const runs = readdirSync(join(dir, 'out')).sort();
    const run = readRunJson(join(dir, 'out', runs.at(-1)!));
    expect(run.agents.map((a: any) => a.agent_id)).toEqual(['stayer']);
    expect(run.requests).toBe(10);
    expect(run.status).toBe('completed');
    // Released, it waits for a third coordinator rather than exiting; the dead run's spool was set aside.
    await until(said, /released by the coordinator[\s\S]*waiting for the next coordinator/, 30_000);
    expect(stayer.child.exitCode).toBeNull();
    stayer.child.kill('SIGTERM');
    const gone = await stayer.done;
    expect(gone.stderr).toMatch(/kept .*\.unsent \(its run is not in progress here\)/);
  });
});
