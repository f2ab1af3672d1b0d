// A coordinator that dies mid-run: its agents stop sending load within the grace, exit, and keep their
// spools (endpoints are expensive; nobody would take the results).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childPids } from '../bench/proc.js';
import { constantRatePlan, listeningCoordinator, startNode, tempDir, waitFor, writePlan } from './harness.js';

describe('the coordinator goes away', () => {
  it('agents stop, exit non-zero and keep their spool', async () => {
    const work = tempDir();
    const spool = join(work, 'spool');
    const { coord, url } = await listeningCoordinator(
      ['--agents', '1', '--plan', writePlan(work, constantRatePlan('gone', 30, 10)), '--out', join(work, 'out')],
      { LOADFLEET_TOKEN: 'gone' },
    );
    let simPid: number | undefined;
    void waitFor(coord.child.stderr!, /t=2s/).then(() => {
      simPid = childPids(coord.child.pid!, 'sim/main.js')[0];
      coord.child.kill('SIGKILL');
    });
    const agent = startNode('agent/main.js', ['--coordinator', url, '--id', 'orphan', '--spool-dir', spool], { LOADFLEET_TOKEN: 'gone' });
    const started = Date.now();
    const res = await agent.done;
    expect(res.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(20_000); // long before the 30 s plan would end
    const kept = readdirSync(spool).filter((n) => n.endsWith('.spool.ndjson'));
    expect(kept).toHaveLength(1);
    // The embedded engine-sim went with its coordinator (its stdin pipe closed), not left behind.
    expect(simPid).toBeGreaterThan(0);
    const deadline = Date.now() + 5000;
    while (existsSync(`/proc/${simPid}`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(`/proc/${simPid}`)).toBe(false);
  });
});
