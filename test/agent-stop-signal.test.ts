// An agent pod evicted or deleted mid-run is stopped with the image's stop signal, SIGINT (the
// Dockerfile's STOPSIGNAL, which the coordinator needs), sent to the container's first process:
// the image's entry point. The agent must still hand over what it measured, as on SIGTERM. Real
// coordinator and agents (the second through deploy/bin/loadfleet, as in the image) on loopback.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

const ROOT = fileURLToPath(new URL('../', import.meta.url));

describe("the image's stop signal on an agent mid-run", () => {
  it('SIGINT to the entry point: the agent hands its requests over and the run goes on degraded', async () => {
    expect(readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8')).toMatch(/^STOPSIGNAL SIGINT$/m);
    const work = tempDir();
    const env = { LOADFLEET_TOKEN: 'stop-signal' };
    const { coord, url } = await listeningCoordinator(
      [
        '--agents',
        '2',
        '--max-agent-loss',
        '1',
        '--plan',
        writePlan(work, constantRatePlan('stop-signal', 6, 20)),
        '--out',
        join(work, 'out'),
      ],
      env,
    );
    const keeps = startNode('agent/main.js', ['--coordinator', url, '--id', 'keeps', '--spool-dir', join(work, 'spool-keeps')], env);
    const pod = spawn(
      join(ROOT, 'deploy/bin/loadfleet'),
      ['agent', '--coordinator', url, '--id', 'leaves', '--spool-dir', join(work, 'spool-leaves')],
      {
        env: { ...process.env, ...env, LOADFLEET_HOME: ROOT, LOADFLEET_CLOCK_DOMAIN: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    pod.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const left = new Promise<number | null>((resolve) => pod.on('exit', resolve));
    await waitFor(coord.child.stderr!, /t=2s/);
    pod.kill('SIGINT');
    expect(await left, stderr).toBe(ExitCode.INTERRUPTED);
    expect(stderr).toMatch(/SIGTERM: stopping the load/);
    expect(stderr).toMatch(/handed over its run; exiting/);
    const [kept, res] = await Promise.all([keeps.done, coord.done]);
    expect(kept.code, kept.stderr).toBe(0);
    expect(res.code, res.stderr).toBe(0);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    expect(run.status).toBe('degraded');
    const leaves = run.agents.find((a: { agent_id: string }) => a.agent_id === 'leaves');
    const its = readRequests(dir).filter((r) => r.agent_id === 'leaves');
    expect(its.length).toBeGreaterThan(10);
    expect(its.length).toBe(leaves.requests);
  }, 60_000);
});
