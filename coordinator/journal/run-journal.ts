// One run's journal in its run directory (RUN_DIR/journal/run.journal): the header a recovery
// needs, then every sequenced message the run took, each durable before it is acknowledged, and the
// run's events. Once the run directory is written and flushed, the journal has nothing left to
// protect and is removed; a run directory that still holds one was not finished (its coordinator
// stopped), and `coordinator resume` recovers it from there.
import { open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { LoadfleetError } from '../../shared/errors.js';
import { failpoint } from '../../shared/failpoints.js';
import type { JournalEvent } from './frame.js';
import { eventFrame, headerFrame, messageFrame } from './frame.js';
import type { GroupCommit, JournalStats } from './writer.js';
import { DEFAULT_GROUP_COMMIT, JournalWriter } from './writer.js';

/** The journal's directory inside a run directory. */
export const JOURNAL_DIR = 'journal';
/** The journal file inside it. */
export const JOURNAL_FILE = 'run.journal';

/** Where a run directory's journal is. */
export function journalPath(runDir: string): string {
  return join(runDir, JOURNAL_DIR, JOURNAL_FILE);
}

/** A run's journal, open for appending. */
export class RunJournal {
  private constructor(private readonly writer: JournalWriter) {}

  /**
   * Opens the journal of `runDir` (appending to one a recovery read) and, when `header` is given,
   * makes it durable first. `onFault` hears a write or flush error once.
   */
  static async open(runDir: string, header: unknown, onFault: (err: LoadfleetError) => void, commit?: GroupCommit): Promise<RunJournal> {
    const writer = await JournalWriter.open(journalPath(runDir), onFault, commit ?? DEFAULT_GROUP_COMMIT);
    const journal = new RunJournal(writer);
    if (header !== undefined) {
      await writer.append(headerFrame(header));
      failpoint('journal.header.synced');
    }
    return journal;
  }

  /**
   * Reopens the journal a recovery read, cut to `goodBytes` (its last valid frame's end) and
   * synced whole: what it replays is durable before anything is acknowledged from it.
   */
  static async reopen(
    runDir: string,
    goodBytes: number,
    onFault: (err: LoadfleetError) => void,
    commit?: GroupCommit,
  ): Promise<RunJournal> {
    return new RunJournal(await JournalWriter.reopen(journalPath(runDir), goodBytes, onFault, commit ?? DEFAULT_GROUP_COMMIT));
  }

  get path(): string {
    return this.writer.path;
  }

  /** Set once a write or flush failed. */
  get failure(): LoadfleetError | null {
    return this.writer.failure;
  }

  get stats(): JournalStats {
    return this.writer.stats;
  }

  /** One sequenced message as it arrived; resolves once it is durable. */
  message(agent: number, epoch: string, raw: Uint8Array): Promise<void> {
    return this.writer.append(messageFrame(agent, epoch, raw));
  }

  /** One run event (its flush goes with the next group; a failure is the writer's fault to report). */
  event(event: JournalEvent): void {
    void this.writer.append(eventFrame(event)).catch(() => {});
  }

  /** Resolves once everything appended so far is durable (or the journal failed). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Closes the file (what was appended is flushed first). */
  close(): Promise<void> {
    return this.writer.close();
  }

  /**
   * The run directory is written: flushes every file in it (and the directory) to disk, then
   * removes the journal, which has nothing left to protect.
   */
  async retire(runDir: string): Promise<void> {
    await this.close();
    failpoint('rundir.sync.before');
    await syncTree(runDir, join(runDir, JOURNAL_DIR));
    failpoint('journal.remove.before');
    await rm(join(runDir, JOURNAL_DIR), { recursive: true, force: true });
    // The removal itself made durable: a crash now must not find the journal again.
    await syncFile(runDir);
    failpoint('journal.remove.after');
  }
}

// fsync of every file under `dir` (but `skip`), then of the directories themselves.
async function syncTree(dir: string, skip: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    if (path === skip) continue;
    const s = await stat(path);
    if (s.isDirectory()) await syncTree(path, skip);
    else if (s.isFile()) await syncFile(path);
  }
  await syncFile(dir);
}

async function syncFile(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
