import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findSpools, Spool } from './spool.js';

describe('spool files', () => {
  it("finds every worker thread's spool of the newest run, and nothing of older runs or other agents", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loadfleet-spool-'));
    const open = async (agent: string, run: string, part = ''): Promise<void> =>
      (await Spool.open(dir, { run_id: run, agent_id: agent, windows: [] }, part)).close(false);
    await open('a.1', '20261202T100000Z-plan.x-aaaa', '.w0');
    await open('a.1', '20261202T110000Z-plan.x-bbbb', '.w0');
    await open('a.1', '20261202T110000Z-plan.x-bbbb', '.w1');
    await open('a.10', '20261202T120000Z-plan.x-cccc');
    const found = (await findSpools(dir, 'a.1')).map((p) => p.slice(dir.length + 1));
    expect(found).toEqual(['a.1.20261202T110000Z-plan.x-bbbb.w0.spool.ndjson', 'a.1.20261202T110000Z-plan.x-bbbb.w1.spool.ndjson']);
    expect(await findSpools(dir, 'b')).toEqual([]);
  });
});
