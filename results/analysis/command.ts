// `coordinator analyze DIR…`: an experiment directory (its manifest names the finished runs), or
// run directories of one experiment (their run.json `experiment` tags name arm and repeat; the
// experiment comes from --experiment or from the experiment directory they sit in).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ErrorCode, ExitCode, formatError, LoadfleetError } from '../../shared/errors.js';
import { loadExperimentFile } from '../../shared/experiment-load.js';
import { RECORD_FILE, readExperimentDir } from '../experiment-record.js';
import { writeExperimentReport } from '../report/index.js';
import { ANALYSIS_FILE, analysisTable, analyzeExperimentDir, analyzeRunDirs } from './analyze.js';

/** Runs the command; returns the exit code. */
export async function analyzeCommand(
  dirs: readonly string[],
  o: { experiment?: string; out?: string },
  print: (line: string) => void,
  warn: (line: string) => void,
): Promise<number> {
  if (dirs.length === 1 && existsSync(join(dirs[0]!, RECORD_FILE)) && !o.experiment) {
    const { record } = await readExperimentDir(dirs[0]!);
    const { path, analysis } = await analyzeExperimentDir(dirs[0]!, o.out);
    if (!o.out) await writeExperimentReport(dirs[0]!).catch((err: unknown) => warn(`report.html not written: ${formatError(err)}`));
    return done(analysis, record.experiment, path, print);
  }
  const source = await experimentFor(dirs, o.experiment);
  const out = o.out ?? (source.expDir ? join(source.expDir, ANALYSIS_FILE) : ANALYSIS_FILE);
  const { path, analysis } = await analyzeRunDirs(
    dirs,
    source.experiment,
    source.armPlans,
    source.plan,
    out,
    (l) => warn(`skipped ${l}`),
    source.expDir,
  );
  return done(analysis, source.experiment, path, print);
}

function done(
  analysis: Record<string, unknown>,
  experiment: Parameters<typeof analysisTable>[1],
  path: string,
  print: (line: string) => void,
): number {
  for (const line of analysisTable(analysis, experiment)) print(line);
  print(`  analysis: ${path}`);
  return ExitCode.OK;
}

// The experiment definition: --experiment, or the experiment directory all the run directories are in.
async function experimentFor(dirs: readonly string[], file: string | undefined) {
  if (file) {
    const loaded = await loadExperimentFile(file);
    return { ...loaded, expDir: undefined };
  }
  const parents = [...new Set(dirs.map((d) => dirname(dirname(resolve(d)))))];
  if (parents.length === 1 && existsSync(join(parents[0]!, RECORD_FILE))) {
    const { record } = await readExperimentDir(parents[0]!);
    return { experiment: record.experiment, armPlans: Object.values(record.arm_plans), plan: record.plan, expDir: parents[0]! };
  }
  throw new LoadfleetError(
    ErrorCode.USAGE,
    'these run directories are not inside one experiment directory: pass the experiment file with --experiment FILE',
    { exitCode: ExitCode.INVALID_INPUT },
  );
}
