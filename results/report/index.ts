// report.html for a run directory or an experiment directory: read the directory's own files,
// render the page (pure), write it atomically beside them.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../shared/atomic-file.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import { renderExperimentReport } from './experiment-page.js';
import { exists, loadExperimentReportInput, loadRunReportInput } from './read-dir.js';
import { renderRunReport } from './run-page.js';

/** The report's file name in every run and experiment directory. */
export const REPORT_FILE = 'report.html';

/** Writes `<runDir>/report.html` from the run's artifacts; returns its path. */
export async function writeRunReport(runDir: string): Promise<string> {
  const html = renderRunReport(await loadRunReportInput(runDir));
  const path = join(runDir, REPORT_FILE);
  await writeFileAtomic(path, html);
  return path;
}

/** Writes `<expDir>/report.html` from analysis.json (linking each run's own report); returns its path. */
export async function writeExperimentReport(expDir: string): Promise<string> {
  const html = renderExperimentReport(await loadExperimentReportInput(expDir));
  const path = join(expDir, REPORT_FILE);
  await writeFileAtomic(path, html);
  return path;
}

/**
 * `coordinator report DIR`: (re)writes the report of a run directory (run.json), or of an
 * experiment directory (analysis.json) after those of its runs under runs/, so its links resolve.
 * Returns the paths written.
 */
export async function writeReports(dir: string): Promise<string[]> {
  if (await exists(join(dir, 'analysis.json'))) {
    const written: string[] = [];
    const runs = (await exists(join(dir, 'runs'))) ? await readdir(join(dir, 'runs')) : [];
    for (const name of runs.sort()) {
      if (await exists(join(dir, 'runs', name, 'run.json'))) written.push(await writeRunReport(join(dir, 'runs', name)));
    }
    written.push(await writeExperimentReport(dir));
    return written;
  }
  if (await exists(join(dir, 'run.json'))) return [await writeRunReport(dir)];
  throw new LoadfleetError(ErrorCode.REPORT_INPUT, `${dir} holds neither analysis.json (an experiment) nor run.json (a run)`, {
    exitCode: ExitCode.INVALID_INPUT,
  });
}
