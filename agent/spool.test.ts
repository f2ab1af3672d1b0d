import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LoadfleetError } from '../shared/errors.js';
import { blankRecord } from '../shared/metrics.js';
import { findSpools, readSpool, Spool, spoolDamage } from './spool.js';

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

  it('drops a torn last line and counts damaged lines before it, never silently', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loadfleet-spool-'));
    const spool = await Spool.open(dir, { run_id: 'r', agent_id: 'a', windows: [] });
    const record = { ...blankRecord('c', 0, null), status: 'ok' as const };
    spool.append([0, 1, 2].map((i) => ({ record: { ...record, request_index: i }, gaps: [] })));
    await spool.close(false);
    const whole = await readSpool(spool.path);
    expect([whole.entries.length, whole.tornLast, whole.corruptLines, spoolDamage([whole])]).toEqual([3, false, 0, '']);
    // A byte flipped inside the second record, and a last record cut mid-write.
    const lines = readFileSync(spool.path, 'utf8').split('\n');
    lines[2] = lines[2]!.replace('{', '#');
    writeFileSync(spool.path, `${lines.slice(0, 4).join('\n')}\n{"record":{"class`);
    const read = await readSpool(spool.path);
    expect(read.entries.map((e) => e.record.request_index)).toEqual([0, 2]);
    expect([read.tornLast, read.corruptLines]).toEqual([true, 1]);
    expect(spoolDamage([read, whole])).toBe(
      '1 torn last line(s) dropped (a write cut by the crash); 1 damaged line(s) that do not parse, each a request lost',
    );
  });

  // /dev/full answers every write with ENOSPC: a spool file linked to it is a full disk.
  it.skipIf(!existsSync('/dev/full'))(
    'a write that fails (ENOSPC) is reported once, naming the path and the errno; later writes are dropped and close still ends',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'loadfleet-spool-'));
      const header = { run_id: '20261202T100000Z-full-aaaa', agent_id: 'a', windows: [] };
      const path = join(dir, `a.${header.run_id}.spool.ndjson`);
      symlinkSync('/dev/full', path);
      const heard: LoadfleetError[] = [];
      const spool = await Spool.open(dir, header, '', (err) => heard.push(err));
      const record = blankRecord('c', 1, null);
      await new Promise((r) => setTimeout(r, 50));
      spool.append([{ record, gaps: [1, 2] }]);
      spool.append([{ record, gaps: [3] }]);
      await new Promise((r) => setTimeout(r, 50));
      expect(heard).toHaveLength(1);
      expect(heard[0]!.code).toBe('LF_SPOOL_WRITE');
      expect(heard[0]!.message).toContain(`the spool ${path} cannot be written (ENOSPC: `);
      expect(spool.failed).toBe(heard[0]);
      await spool.close(false);
    },
  );
});
