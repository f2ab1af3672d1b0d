import { mkdirSync, mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJournalHeader } from './journal/reader.js';
import { RunJournal } from './journal/run-journal.js';
import { resumeRun, unfinishedRuns } from './recover.js';
import { JOURNAL_FORMAT } from './run/journal-header.js';

const PLAN = { name: 'p', seed: 1, duration_s: 5, classes: [{ name: 'c' }] };

// A journal's header as far as these checks read it, written by coordinator `pid` on `host`.
async function journal(out: string, name: string, pid: number, host = hostname(), plan: object = PLAN): Promise<string> {
  const dir = join(out, name);
  mkdirSync(dir, { recursive: true });
  const header = { format: JOURNAL_FORMAT, run_id: name, plan, coordinator: { pid, host, started_unix_ms: 0 } };
  const j = await RunJournal.open(dir, header, () => {});
  await j.message(0, 'e', Buffer.alloc(1 << 16, 1)); // a large first message: the header is read alone
  await j.close();
  return dir;
}

describe('runs left unfinished in --out', () => {
  it('a journal whose coordinator is gone is unfinished; one whose coordinator runs here is in progress; another host is named apart', async () => {
    const out = mkdtempSync(join(tmpdir(), 'lf-recover-'));
    // A pid that is not running: beyond the kernel's pid_max default.
    const gone = await journal(out, 'r-gone', 4_194_304 + 7);
    const live = await journal(out, 'r-live', process.pid);
    const far = await journal(out, 'r-far', process.pid, 'another-host');
    mkdirSync(join(out, 'r-done')); // a finished run: its journal removed
    expect(await unfinishedRuns(out)).toEqual({ here: [gone], elsewhere: [far], otherPlan: [] });
    // A start naming another plan is a new command, not the same one restarted: it leaves the run as it is.
    const other = { ...PLAN, name: 'q' } as never;
    expect(await unfinishedRuns(out, other)).toEqual({ here: [], elsewhere: [far], otherPlan: [gone] });
    expect(await unfinishedRuns(out, PLAN as never)).toEqual({ here: [gone], elsewhere: [far], otherPlan: [] });
    expect(await readJournalHeader(join(out, 'r-done'))).toBeNull();
    expect(((await readJournalHeader(live)) as { run_id: string }).run_id).toBe('r-live');
    // Resuming a run in progress is refused before anything listens.
    await expect(resumeRun(live, {} as never)).rejects.toThrow(
      `run r-live is in progress: its coordinator (pid ${process.pid}) is running on this host`,
    );
  });
});
