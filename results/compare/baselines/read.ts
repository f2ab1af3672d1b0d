// The baseline's I/O: a file another tool wrote (or AIPerf's artifact directory) read from disk and
// handed to the pure readers; a malformed file is refused with every problem found.
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, ExitCode, LoadfleetError } from '../../../shared/errors.js';
import { RECORD_FILE } from '../../experiment-record.js';
import type { ReadOptions } from './detect.js';
import { readBaselineText } from './detect.js';
import type { ForeignBaseline } from './types.js';

/** Files a tool's output directory holds, the per-request one first. */
const DIRECTORY_FILES = [
  'profile_export.jsonl',
  'profile_export_aiperf.json',
  'benchmarks.json',
  'benchmark-report.yaml',
  'benchmark-report.json',
];

/** Whether path is a loadfleet run or experiment directory (read by loadSide, not here). */
export function isLoadfleetDir(path: string): boolean {
  return existsSync(join(path, 'run.json')) || existsSync(join(path, RECORD_FILE));
}

/** The baseline file or directory of another tool, read; refused with every problem when malformed. */
export async function readForeignBaseline(path: string, o: ReadOptions): Promise<{ baseline: ForeignBaseline; file: string }> {
  let file = path;
  if (existsSync(path) && statSync(path).isDirectory()) {
    const found = DIRECTORY_FILES.map((f) => join(path, f)).find((f) => existsSync(f));
    if (!found)
      throw new LoadfleetError(
        ErrorCode.REPORT_INPUT,
        `${path} is neither a loadfleet run or experiment directory nor holds a baseline file`,
        {
          exitCode: ExitCode.INVALID_INPUT,
          details: [`looked for run.json, ${RECORD_FILE}, ${DIRECTORY_FILES.join(', ')}`],
        },
      );
    file = found;
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new LoadfleetError(ErrorCode.REPORT_INPUT, `cannot read the baseline ${file}: ${(e as Error).message}`, {
      exitCode: ExitCode.INVALID_INPUT,
    });
  }
  const r = readBaselineText(text, o);
  if ('problems' in r)
    throw new LoadfleetError(ErrorCode.REPORT_INPUT, `the baseline ${file} cannot be compared (${r.problems.length} problem(s))`, {
      exitCode: ExitCode.INVALID_INPUT,
      details: r.problems,
    });
  return { baseline: r, file };
}
