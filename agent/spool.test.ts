import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blankRecord } from '../shared/metrics.js';
import { findSpools, readSpool, Spool } from './spool.js';

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

  it('writes a batch of finished requests that reads back with their gaps', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loadfleet-spool-'));
    const spool = await Spool.open(dir, { run_id: 'r', agent_id: 'a', windows: [] });
    const record = { ...blankRecord('c', 3, null), status: 'ok' as const, sent_ns: 12 };
    spool.append([
      { record, gaps: Float64Array.of(1, 2.5) },
      { record: { ...record, request_index: 4 }, gaps: [] },
    ]);
    await spool.close(false);
    const { entries } = await readSpool(spool.path);
    expect(entries.map((e) => [e.record.request_index, e.gaps])).toEqual([
      [3, [1, 2.5]],
      [4, []],
    ]);
  });
});
