// The coordinator stopped as a container runtime stops it: the real entry point (deploy/bin/loadfleet
// execs node) as PID 1 of its own PID namespace, where a signal without a handler is ignored. Mid-run
// the image's stop signal (SIGINT) ends the run cleanly — the agents told, the run directory written
// whole, status aborted naming the signal — and a repeated signal cannot cut that short; with no run
// under way (a fleet waiting for agents) SIGTERM ends the process at once.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { constantRatePlan, freePort, onlyRunDir, readRequests, readRunJson, tempDir, waitFor, writePlan } from './harness.js';
import { skipFor } from './require.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

const pidNamespaces = (): string | null => {
  if (process.platform !== 'linux') return 'Linux PID namespaces';
  if (process.getuid?.() !== 0) return 'root (unshare --pid --mount-proc)';
  return spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0 ? null : 'unshare from util-linux';
};

/** `loadfleet coordinator ARGS` as PID 1 of a new PID namespace; `pid1()` is its pid as seen from here. */
function coordinatorAsPid1(args: readonly string[], env: Record<string, string> = {}) {
  const child = spawn('unshare', ['--pid', '--fork', '--mount-proc', join(REPO_ROOT, 'deploy/bin/loadfleet'), 'coordinator', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  const done = new Promise<{ code: number | null; stderr: string; stdout: string }>((r) =>
    child.on('exit', (code) => r({ code, stderr, stdout })),
  );
  const pid1 = (): number =>
    Number(
      execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n')[0],
    );
  return { child, done, pid1 };
}

describe.skipIf(skipFor('coordinator as PID 1', pidNamespaces()))('the coordinator as PID 1 of a container', () => {
  it('mid-run, the image stop signal (SIGINT, then again) aborts the run and writes the whole run directory', async () => {
    const work = tempDir();
    const coord = coordinatorAsPid1([
      'start',
      '--agents',
      '2',
      '--plan',
      writePlan(work, constantRatePlan('pid1-coord', 30, 10)),
      '--out',
      join(work, 'out'),
    ]);
    await waitFor(coord.child.stderr!, /t=3s/);
    const pid = coord.pid1();
    const stoppedAt = Date.now();
    process.kill(pid, 'SIGINT');
    await new Promise((r) => setTimeout(r, 100));
    process.kill(pid, 'SIGTERM'); // a runtime repeating itself, or a second Ctrl-C: the directory is still written
    const res = await coord.done;
    console.log(`coordinator as PID 1: the directory written and the process gone ${Date.now() - stoppedAt} ms after SIGINT`);
    expect(res.code, res.stderr).toBe(ExitCode.ABORTED);
    expect(Date.now() - stoppedAt, 'it stops at once, not at the end of the 30 s plan').toBeLessThan(15_000);
    expect(res.stderr).toContain('SIGINT: stopping the run');
    expect(res.stderr).toContain('SIGTERM again: already stopping');
    const dir = onlyRunDir(join(work, 'out'));
    for (const f of ['run.json', 'requests.ndjson', 'traffic.csv', 'histograms.hlog', 'report.html', 'benchmark-report.json'])
      expect(existsSync(join(dir, f)), f).toBe(true);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    const run = readRunJson(dir);
    expect(run.status).toBe('aborted');
    expect(run.status_reason).toMatch(/interrupted by the user \(SIGINT/);
    // The agents were told and handed over: every request they finished is in, once, none after the stop.
    const rows = readRequests(dir);
    expect(rows.length).toBeGreaterThan(20); // 10 req/s for the 3 s before the stop
    expect(rows.length).toBe(run.requests);
    expect(new Set(rows.map((r) => r.request_index)).size).toBe(rows.length);
    for (const a of run.agents) expect(a.status, a.agent_id).toBe('ok');
  }, 60_000);

  it('with no run under way (a fleet waiting for agents), SIGTERM ends it at once', async () => {
    const work = tempDir();
    const port = await freePort();
    const coord = coordinatorAsPid1(
      [
        'start',
        '--agents',
        '2',
        '--listen',
        `127.0.0.1:${port}`,
        '--plan',
        writePlan(work, constantRatePlan('pid1-idle', 5, 5)),
        '--out',
        join(work, 'out'),
      ],
      { LOADFLEET_TOKEN: 'pid1-idle' },
    );
    await waitFor(coord.child.stderr!, /waiting for \d+ agent\(s\) at/);
    const stoppedAt = Date.now();
    process.kill(coord.pid1(), 'SIGTERM');
    const res = await coord.done;
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
    expect(res.code, res.stderr).toBe(ExitCode.INTERRUPTED);
    expect(res.stderr).toMatch(/error LF_ABORTED: stopped by SIGTERM .* while waiting for agents \(0 of 2 joined\)/);
    // Nothing was planned on an agent, so no run directory was made.
    expect(existsSync(join(work, 'out')) ? readdirSync(join(work, 'out')) : []).toEqual([]);
  }, 30_000);
});
