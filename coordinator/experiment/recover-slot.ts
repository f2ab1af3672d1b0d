// `coordinator experiment FILE --resume` after a coordinator that stopped in the middle of a run
// (killed, crashed): the manifest says that arm × repeat is `running` with no run directory yet,
// and its run directory under runs/ still holds the run's journal (the header names the arm and
// repeat). That run is recovered from its journal — the agents that outlived the coordinator rejoin
// within their grace and resend what was not durable — instead of being run again; the experiment
// then runs what is left. A slot whose run left no journal is run again, as before.
import { readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Manifest, ManifestEntry } from '../../results/experiment-record.js';
import { writeManifest } from '../../results/experiment-record.js';
import { readJournalHeader } from '../journal/reader.js';
import { journalPath } from '../journal/run-journal.js';
import { resumeRun, writerRunning } from '../recover.js';
import type { JournalHeader } from '../run/journal-header.js';
import { JOURNAL_FORMAT } from '../run/journal-header.js';
import type { RunOptions } from '../run/options.js';

// The run directory under runs/ whose journal is this slot's, left by a coordinator that is gone.
async function journalOf(dir: string, entry: ManifestEntry): Promise<string | null> {
  const names = await readdir(join(dir, 'runs')).catch(() => [] as string[]);
  for (const name of names.sort().reverse()) {
    const runDir = join(dir, 'runs', name);
    const header = (await readJournalHeader(runDir)) as JournalHeader | null;
    if (header?.format !== JOURNAL_FORMAT || writerRunning(header)) continue;
    const e = header.options.experiment;
    if (e?.arm === entry.arm && e.repeat === entry.repeat) return runDir;
  }
  return null;
}

/** Recovers every slot that was under way when the coordinator stopped; run before the fleet is gathered. */
export async function recoverUnderway(
  dir: string,
  manifest: Manifest,
  run: Omit<RunOptions, 'plan' | 'outDir' | 'experiment'>,
): Promise<void> {
  for (const entry of manifest.runs.filter((e) => e.status === 'running')) {
    const runDir = await journalOf(dir, entry);
    if (!runDir) {
      run.log(`arm "${entry.arm}" repeat ${entry.repeat} was under way but left no journal: it is run again`);
      continue;
    }
    const down = (await stat(journalPath(runDir))).mtime;
    const restarted = new Date();
    run.log(`arm "${entry.arm}" repeat ${entry.repeat} was under way when the coordinator stopped: recovering ${runDir} from its journal`);
    const result = await resumeRun(runDir, { ...run, plan: undefined as never, outDir: runDir });
    Object.assign(entry, {
      status: result.status,
      run_dir: relative(dir, result.dir),
      status_reason: /^run \S+: \w+ \((.*)\)$/.exec(result.summaryLines[0] ?? '')?.[1] ?? null,
      finished_at: new Date().toISOString(),
      recovered: {
        down_from: down.toISOString(),
        restarted_at: restarted.toISOString(),
        outage_s: (restarted.getTime() - down.getTime()) / 1000,
      },
    });
    await writeManifest(dir, manifest);
  }
}
