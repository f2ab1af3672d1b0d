// An agent told to stop mid-run (SIGTERM: a pod evicted or deleted, `systemctl stop`) hands over
// what it measured through the run's normal path — every finished request acknowledged, then
// `final` — and exits; the coordinator keeps its data and counts it lost within --max-agent-loss.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import {
  constantRatePlan,
  listeningCoordinator,
  onlyRunDir,
  readRequests,
  readRunJson,
  startNode,
  tempDir,
  waitFor,
  writePlan,
} from './harness.js';
import { skipFor } from './require.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('SIGTERM on an agent mid-run', () => {
  it('hands its requests over, exits, and the run goes on degraded within --max-agent-loss', async () => {
    const work = tempDir();
    const env = { LOADFLEET_TOKEN: 'sigterm' };
    const { coord, url } = await listeningCoordinator(
      ['--agents', '2', '--max-agent-loss', '1', '--plan', writePlan(work, constantRatePlan('sigterm', 6, 20)), '--out', join(work, 'out')],
      env,
    );
    const spool = (id: string) => join(work, `spool-${id}`);
    const agents = ['keeps', 'leaves'].map((id) =>
      startNode('agent/main.js', ['--coordinator', url, '--id', id, '--spool-dir', spool(id)], env),
    );
    const leaving = agents[1]!;
    // Two seconds into the load: the agent has finished requests on its spool and more in flight.
    await waitFor(coord.child.stderr!, /t=2s/);
    const terminatedAt = Date.now();
    leaving.child.kill('SIGTERM');
    const left = await leaving.done;
    expect(left.code, left.stderr).toBe(ExitCode.INTERRUPTED);
    expect(Date.now() - terminatedAt, 'it leaves at once, not at the end of the plan').toBeLessThan(4000);
    expect(left.stderr).toMatch(/SIGTERM: stopping the load/);
    expect(left.stderr).toMatch(/handed over its run; exiting/);
    // Handed over: nothing left on its spool for a restart to upload.
    expect(readdirSync(spool('leaves')).filter((n) => n.endsWith('.spool.ndjson'))).toEqual([]);

    const [kept, res] = await Promise.all([agents[0]!.done, coord.done]);
    expect(kept.code, kept.stderr).toBe(0);
    expect(res.code, res.stderr).toBe(0);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    const rows = readRequests(dir);
    expect(run.status).toBe('degraded');
    expect(run.status_reason).toMatch(/agent leaves was lost \(the agent was terminated \(SIGTERM\); it handed over its \d+ requests\)/);
    const leaves = run.agents.find((a: { agent_id: string }) => a.agent_id === 'leaves');
    expect(leaves.status).toBe('lost');
    // Its data is in the run: every request it finished, once.
    const its = rows.filter((r) => r.agent_id === 'leaves');
    expect(its.length).toBeGreaterThan(10);
    expect(its.length).toBe(leaves.requests);
    expect(new Set(its.map((r) => r.request_index)).size).toBe(its.length);
    // The other agent ran its whole share: 6 s at 10/s.
    expect(rows.filter((r) => r.agent_id === 'keeps' && r.status === 'ok').length).toBe(60);
  }, 40_000);
});

// In a container the agent is PID 1 (deploy/bin/loadfleet execs node), where a signal without a
// handler is ignored, and the runtime sends the image's STOPSIGNAL (SIGINT), not SIGTERM. Run the
// real entry point as PID 1 of its own PID namespace and stop it as a runtime would.
const pidNamespaces = (): string | null => {
  if (process.platform !== 'linux') return 'Linux PID namespaces';
  if (process.getuid?.() !== 0) return 'root (unshare --pid --mount-proc)';
  return spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0 ? null : 'unshare from util-linux';
};

describe.skipIf(skipFor('agent as PID 1', pidNamespaces()))('an agent as PID 1 of a container', () => {
  it('hands over on SIGINT (the image stop signal) and on SIGTERM, a repeated signal included', async () => {
    const work = tempDir();
    const env = { LOADFLEET_TOKEN: 'pid1' };
    const { coord, url } = await listeningCoordinator(
      ['--agents', '3', '--max-agent-loss', '2', '--plan', writePlan(work, constantRatePlan('pid1', 6, 30)), '--out', join(work, 'out')],
      env,
    );
    const spool = (id: string) => join(work, `spool-${id}`);
    const keeps = startNode('agent/main.js', ['--coordinator', url, '--id', 'keeps', '--spool-dir', spool('keeps')], env);
    const asPid1 = (id: string) => {
      const child = spawn(
        'unshare',
        [
          '--pid',
          '--fork',
          '--mount-proc',
          join(REPO_ROOT, 'deploy/bin/loadfleet'),
          'agent',
          '--coordinator',
          url,
          '--id',
          id,
          '--spool-dir',
          spool(id),
        ],
        { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      const done = new Promise<{ code: number | null; stderr: string }>((r) => child.on('exit', (code) => r({ code, stderr })));
      return { child, done };
    };
    const int = asPid1('int');
    const term = asPid1('term');
    await waitFor(coord.child.stderr!, /t=2s/);
    // The agent is unshare's child: PID 1 inside, this pid outside (signals from an ancestor
    // namespace reach a namespace's init only if it handles them).
    const pid1 = (unsharePid: number): number => Number(execFileSync('pgrep', ['-P', String(unsharePid)], { encoding: 'utf8' }).trim());
    const intPid = pid1(int.child.pid!);
    const termPid = pid1(term.child.pid!);
    // The coordinator is stopped while the signals arrive, so neither hand-over can finish (each
    // waits for acknowledgements) before the second SIGINT lands: on a quiet machine a hand-over
    // takes a few ms, less than any fixed wait a test could choose.
    const coordPid = coord.child.pid!;
    process.kill(coordPid, 'SIGSTOP');
    const stoppedAt = Date.now();
    const intStopping = waitFor(int.child.stderr!, /SIGINT: stopping the load/);
    process.kill(intPid, 'SIGINT');
    process.kill(termPid, 'SIGTERM');
    // Only after the first SIGINT was handled: two sent back to back can merge into one delivery.
    await intStopping;
    process.kill(intPid, 'SIGINT'); // a second Ctrl-C or a repeating runtime: the hand-over goes on
    await new Promise((r) => setTimeout(r, 200));
    process.kill(coordPid, 'SIGCONT');
    const [intLeft, termLeft] = await Promise.all([int.done, term.done]);
    expect(Date.now() - stoppedAt, 'they leave at once, not at the end of the plan').toBeLessThan(4000);
    for (const [id, left, signal] of [
      ['int', intLeft, 'SIGINT'],
      ['term', termLeft, 'SIGTERM'],
    ] as const) {
      expect(left.code, left.stderr).toBe(ExitCode.INTERRUPTED);
      expect(left.stderr).toContain(`${signal}: stopping the load`);
      expect(left.stderr).toMatch(/handed over its run; exiting/);
      expect(
        readdirSync(spool(id)).filter((n) => n.endsWith('.spool.ndjson')),
        id,
      ).toEqual([]);
    }
    expect(intLeft.stderr).toContain('SIGINT again: already handing over');

    const [kept, res] = await Promise.all([keeps.done, coord.done]);
    expect(kept.code, kept.stderr).toBe(0);
    expect(res.code, res.stderr).toBe(0);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    const rows = readRequests(dir);
    expect(run.status).toBe('degraded');
    for (const id of ['int', 'term']) {
      const a = run.agents.find((x: { agent_id: string }) => x.agent_id === id);
      expect(a.status, id).toBe('lost');
      const its = rows.filter((r) => r.agent_id === id);
      expect(its.length, id).toBeGreaterThan(5);
      expect(its.length, id).toBe(a.requests);
      expect(new Set(its.map((r) => r.request_index)).size, id).toBe(its.length);
    }
    expect(run.status_reason).toMatch(/the agent was terminated \(SIGINT\)/);
    expect(run.status_reason).toMatch(/the agent was terminated \(SIGTERM\)/);
  }, 60_000);
});
