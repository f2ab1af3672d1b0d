import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJournalHeader } from './journal/reader.js';
import { RunJournal } from './journal/run-journal.js';
import { planSha256 } from './plan-hash.js';
import { resumeRun, unfinishedRuns } from './recover.js';
import { JOURNAL_FORMAT } from './run/journal-header.js';

const PLAN = { name: 'p', seed: 1, duration_s: 5, classes: [{ name: 'c' }] };

// A journal's header as far as these checks read it, written by coordinator `pid` on `host`.
async function journal(out: string, name: string, pid: number, host = hostname(), plan: object = PLAN): Promise<string> {
  const dir = join(out, name);
  mkdirSync(dir, { recursive: true });
  const header = {
    format: JOURNAL_FORMAT,
    run_id: name,
    plan,
    plan_sha256: planSha256(plan as never),
    coordinator: { pid, host, started_unix_ms: Date.now() },
  };
  const j = await RunJournal.open(dir, header, () => {});
  await j.message(0, 'e', Buffer.alloc(1 << 16, 1)); // a large first message: the header is read alone
  await j.close();
  return dir;
}

// A coordinator still running: a process of our own (this test's pid is not a writer: a
// restarted coordinator in a container often has its dead predecessor's pid).
const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
afterAll(() => void sleeper.kill('SIGKILL'));

describe('runs left unfinished in --out', () => {
  it('a journal whose coordinator is gone is unfinished; one whose coordinator runs here is in progress; another host is named apart', async () => {
    const out = mkdtempSync(join(tmpdir(), 'lf-recover-'));
    // A pid that is not running: beyond the kernel's pid_max default.
    const gone = await journal(out, 'r-gone', 4_194_304 + 7);
    const live = await journal(out, 'r-live', sleeper.pid!);
    const far = await journal(out, 'r-far', sleeper.pid!, 'another-host');
    const mine = await journal(out, 'r-mine', process.pid); // this very process cannot be the writer
    mkdirSync(join(out, 'r-done')); // a finished run: its journal removed
    const torn = join(out, 'r-torn');
    mkdirSync(join(torn, 'journal'), { recursive: true });
    writeFileSync(join(torn, 'journal', 'run.journal'), Buffer.alloc(4096)); // its header never reached the disk
    expect(await unfinishedRuns(out)).toEqual({ here: [gone, mine], elsewhere: [far], otherPlan: [], noHeader: [torn] });
    // A start naming another plan is a new command, not the same one restarted: it leaves the run as it is.
    const other = { ...PLAN, name: 'q' } as never;
    expect(await unfinishedRuns(out, other)).toEqual({ here: [], elsewhere: [far], otherPlan: [gone, mine], noHeader: [torn] });
    expect(await unfinishedRuns(out, PLAN as never)).toEqual({ here: [gone, mine], elsewhere: [far], otherPlan: [], noHeader: [torn] });
    expect(await readJournalHeader(join(out, 'r-done'))).toBeNull();
    expect(((await readJournalHeader(live)) as { run_id: string }).run_id).toBe('r-live');
    // Resuming a run in progress is refused before anything listens.
    await expect(resumeRun(live, {} as never)).rejects.toThrow(
      `run r-live is in progress: its coordinator (pid ${sleeper.pid}) is running on this host`,
    );
  });

  it('the same plan is the same hash: another rate is another plan, and so is any change', async () => {
    const out = mkdtempSync(join(tmpdir(), 'lf-recover-'));
    const plan = {
      ...PLAN,
      classes: [{ name: 'c', load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 5, rate_per_s: 10 }] } }],
    };
    const dir = await journal(out, 'r-1', 4_194_304 + 7, hostname(), plan);
    const faster = {
      ...plan,
      classes: [{ name: 'c', load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 5, rate_per_s: 20 }] } }],
    };
    expect(await unfinishedRuns(out, faster as never)).toMatchObject({ here: [], otherPlan: [dir] });
    // Key order is not identity.
    const reordered = { classes: plan.classes, duration_s: 5, seed: 1, name: 'p' };
    expect(await unfinishedRuns(out, reordered as never)).toMatchObject({ here: [dir], otherPlan: [] });
  });
});
