// The results files read back: run.json through the one reader every consumer of a finished run
// uses (the report, compare, analysis, the SLO gate, the Benchmark Report, the sweep's stage judge),
// and one reader each for sweep.json, analysis.json and comparison.json. A run that failed before
// any load has its own shape (status "failed"); a reader that needs figures asks for a result.
import { join } from 'node:path';
import { checkArtifact, readArtifact, readDocument } from './artifact-read.js';
import { ErrorCode, ExitCode, LoadfleetError } from './errors.js';
import {
  AnalysisFile,
  type AnalysisJson,
  ComparisonFile,
  type ComparisonJson,
  SweepResultFile,
  type SweepResultJson,
} from './result-schemas.js';
import { FailedRunFile, type FailedRunJson, type RunJson, RunResultFile } from './run-schema.js';
import { isObj } from './validate-kit.js';

/** The run.json path of a run directory (or the path itself when it names the file). */
export function runJsonPath(dirOrFile: string): string {
  return dirOrFile.endsWith('.json') ? dirOrFile : join(dirOrFile, 'run.json');
}

/** run.json, either kind, checked against the shape its status names. */
export function checkRunJson(doc: unknown, path: string): RunJson | FailedRunJson {
  if (isObj(doc) && doc['status'] === 'failed') return checkArtifact(FailedRunFile, doc, path);
  return checkArtifact(RunResultFile, doc, path);
}

/** Reads a run directory's run.json, either kind. */
export async function readRunFile(dirOrFile: string): Promise<RunJson | FailedRunJson> {
  const path = runJsonPath(dirOrFile);
  return checkRunJson(await readDocument(path), path);
}

/** Reads a run directory's run.json of a run that sent load; a run that failed before any load is refused with its reason. */
export async function readRunJson(dirOrFile: string): Promise<RunJson> {
  const run = await readRunFile(dirOrFile);
  if (run.status === 'failed')
    throw new LoadfleetError(
      ErrorCode.ARTIFACT_INVALID,
      `${runJsonPath(dirOrFile)} is a run that failed before any load (${run.error.code}: ${run.status_reason}): it has no figures`,
      { exitCode: ExitCode.INVALID_INPUT },
    );
  return run;
}

/** Reads `<dir>/sweep.json` (or the file named). */
export function readSweepJson(dirOrFile: string): Promise<SweepResultJson> {
  return readArtifact(SweepResultFile, dirOrFile.endsWith('.json') ? dirOrFile : join(dirOrFile, 'sweep.json'));
}

/** Reads an experiment directory's `analysis.json` (or the file named). */
export function readAnalysisJson(dirOrFile: string): Promise<AnalysisJson> {
  return readArtifact(AnalysisFile, dirOrFile.endsWith('.json') ? dirOrFile : join(dirOrFile, 'analysis.json'));
}

/** Reads a comparison's `comparison.json` (or the file named). */
export function readComparisonJson(dirOrFile: string): Promise<ComparisonJson> {
  return readArtifact(ComparisonFile, dirOrFile.endsWith('.json') ? dirOrFile : join(dirOrFile, 'comparison.json'));
}
