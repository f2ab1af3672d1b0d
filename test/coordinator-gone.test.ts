// A coordinator that dies mid-run (SIGKILL): its agents go on for the grace, then stop sending load
// (endpoints are expensive; nobody would take the results), keep their spools and keep offering them
// to a coordinator that comes back for --coordinator-wait-s, then exit saying where the spool is
// and how to hand it over.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childPids } from '../bench/proc.js';
import { constantRatePlan, freePort, startNode, tempDir, waitFor, writePlan } from './harness.js';

const spooled = (dir: string, suffix = '.spool.ndjson'): string[] => readdirSync(dir).filter((n) => n.endsWith(suffix));
const lines = (path: string): number => readFileSync(path, 'utf8').split('\n').filter(Boolean).length;

describe('the coordinator goes away', () => {
  it('agents stop the load after the grace, keep offering the spool for the stated time, then exit naming it and how to hand it over', async () => {
    const work = tempDir();
    const spool = join(work, 'spool');
    const { url, coord } = await coordinator(work, 'gone', 30);
    let simPid: number | undefined;
    void waitFor(coord.child.stderr!, /t=2s/).then(() => {
      simPid = childPids(coord.child.pid!, 'sim/main.js')[0];
      coord.child.kill('SIGKILL');
    });
    // The limit from the environment (LOADFLEET_COORDINATOR_WAIT_S), as a pod spec would set it.
    const agent = startNode('agent/main.js', ['--coordinator', url, '--id', 'orphan', '--spool-dir', spool], {
      LOADFLEET_TOKEN: 'gone',
      LOADFLEET_COORDINATOR_WAIT_S: '3',
    });
    await waitFor(agent.child.stderr!, /link to the coordinator lost mid-run; load goes on/);
    await waitFor(agent.child.stderr!, /could not reconnect within the grace: stopping the load/);
    const stoppedAt = Date.now();
    await waitFor(agent.child.stderr!, /trying to hand them over to ws:\/\/[\d.:]+ for up to 3 s \(--coordinator-wait-s\)/);
    const atStop = lines(join(spool, spooled(spool)[0]!));
    const res = await agent.done;
    expect(res.code).toBe(1);
    const waited = Date.now() - stoppedAt;
    expect(waited, 'it kept trying for the stated time').toBeGreaterThanOrEqual(2500);
    expect(waited).toBeLessThan(10_000);
    expect(res.stderr).toContain('the coordinator is gone and the load is stopped; 1 spool file(s) kept in');
    expect(res.stderr).toMatch(
      new RegExp(
        `error LF_JOIN_TIMEOUT: could not hand the spool over \\(.*\\); it is kept in ${spool} \\(orphan\\.[^)]*\\.spool\\.ndjson\\)\\. To hand it over, start this agent again with the same id and spool directory .*: loadfleet agent --coordinator URL --id orphan --spool-dir ${spool}`,
      ),
    );
    // The spool is whole and as it was when the load stopped: nothing was sent after the stop.
    const kept = spooled(spool);
    expect(kept).toHaveLength(1);
    const total = lines(join(spool, kept[0]!));
    expect(total).toBe(atStop);
    expect(total - 1, 'long before the 30 s plan (300 requests) would end').toBeLessThan(200);
    expect(total - 1).toBeGreaterThan(15);
    // The embedded engine-sim went with its coordinator (its stdin pipe closed), not left behind.
    expect(simPid).toBeGreaterThan(0);
    const deadline = Date.now() + 5000;
    while (existsSync(`/proc/${simPid}`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(`/proc/${simPid}`)).toBe(false);
  }, 60_000);

  it('a coordinator that comes back within the wait is offered the spool (a new run: refused, the spool set aside and named)', async () => {
    const work = tempDir();
    const spool = join(work, 'spool');
    const { url, coord, port } = await coordinator(work, 'back', 30);
    void waitFor(coord.child.stderr!, /t=2s/).then(() => coord.child.kill('SIGKILL'));
    const agent = startNode('agent/main.js', ['--coordinator', url, '--id', 'orphan', '--spool-dir', spool, '--coordinator-wait-s', '60'], {
      LOADFLEET_TOKEN: 'back',
    });
    await waitFor(agent.child.stderr!, /trying to hand them over/);
    // Another coordinator on the same address, knowing nothing of the run.
    const again = await coordinator(work, 'back', 5, port, 'out2');
    const res = await agent.done;
    again.coord.child.kill('SIGKILL');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/found the spool of run \S+ \(\d+ requests\); offering it to the coordinator/);
    expect(res.stderr).toMatch(/kept \S+\.spool\.ndjson\.unsent: the coordinator at ws:\/\/[\d.:]+ does not hold its run/);
    expect(spooled(spool, '.unsent')).toHaveLength(1);
  }, 60_000);
});

async function coordinator(work: string, token: string, durationS: number, port?: number, out = 'out') {
  const p = port ?? (await freePort());
  const coord = startNode(
    'coordinator/main.js',
    [
      'start',
      '--listen',
      `127.0.0.1:${p}`,
      '--agents',
      '1',
      '--plan',
      writePlan(work, constantRatePlan(token, durationS, 10), `${out}.plan.json`),
      '--out',
      join(work, out),
    ],
    { LOADFLEET_TOKEN: token },
  );
  const [, url] = await waitFor(coord.child.stderr!, /waiting for \d+ agent\(s\) at (wss?:\/\/[\d.:]+)/);
  return { coord, url: url!, port: p };
}
