// A coordinator that dies mid-run: its agents stop sending load at once, exit, and keep their
// spools (endpoints are expensive; nobody would take the results).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { constantRatePlan, listeningCoordinator, startNode, tempDir, waitFor, writePlan } from './harness.js';

describe('the coordinator goes away', () => {
  it('agents stop, exit non-zero and keep their spool', async () => {
    const work = tempDir();
    const spool = join(work, 'spool');
    const { coord, url } = await listeningCoordinator(
      ['--agents', '1', '--plan', writePlan(work, constantRatePlan('gone', 30, 10)), '--out', join(work, 'out')],
      { LOADFLEET_TOKEN: 'gone' },
    );
    void waitFor(coord.child.stderr!, /t=2s/).then(() => coord.child.kill('SIGKILL'));
    const agent = startNode('agent/main.js', ['--coordinator', url, '--id', 'orphan', '--spool-dir', spool], { LOADFLEET_TOKEN: 'gone' });
    const started = Date.now();
    const res = await agent.done;
    expect(res.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(20_000); // long before the 30 s plan would end
    const kept = readdirSync(spool).filter((n) => n.endsWith('.spool.ndjson'));
    expect(kept).toHaveLength(1);
  });
});
