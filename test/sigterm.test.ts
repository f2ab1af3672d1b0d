// An agent told to stop mid-run (SIGTERM: a pod evicted or deleted, `systemctl stop`) hands over
// what it measured through the run's normal path — every finished request acknowledged, then
// `final` — and exits; the coordinator keeps its data and counts it lost within --max-agent-loss.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
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
