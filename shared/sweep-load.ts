// Turns a sweep file into a validated Sweep and the Plan it names, before any load is sent: syntax
// and shape problems of the sweep, then the plan's own problems, then what only the two together
// reveal (the class, its phase, the warm-up) — each as `<json path>: <what>` lines.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ErrorCode, ExitCode, LoadfleetError } from './errors.js';
import type { Plan } from './plan.js';
import { loadPlanFile, parseDocumentText } from './plan-load.js';
import type { Sweep } from './sweep.js';
import { checkSweepAgainstPlan, validateSweep } from './sweep-validate.js';

/** A sweep file that failed validation; `details` are `<json path>: <what is wrong>` lines. */
export class SweepInvalidError extends LoadfleetError {
  constructor(problems: readonly string[], source: string) {
    super(ErrorCode.SWEEP_INVALID, `${source} is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'})`, {
      exitCode: ExitCode.INVALID_INPUT,
      details: problems,
    });
  }
}

/** A loaded sweep with its plan. */
export interface LoadedSweep {
  sweep: Sweep;
  plan: Plan;
  /** The plan file's path as resolved against the sweep file's directory. */
  planPath: string;
}

/** Parses and validates sweep text whose plan paths resolve against `baseDir`. */
export async function parseSweepText(text: string, sourceName: string, baseDir: string): Promise<LoadedSweep> {
  const parsed = parseDocumentText(text, sourceName);
  if (!parsed.ok) throw new SweepInvalidError(parsed.problems, sourceName);
  const result = validateSweep(parsed.value);
  if (!result.ok) throw new SweepInvalidError(result.problems, sourceName);
  const planPath = resolve(baseDir, result.sweep.plan);
  const plan = await loadPlanFile(planPath);
  const problems = checkSweepAgainstPlan(result.sweep, plan);
  if (problems.length > 0) throw new SweepInvalidError(problems, sourceName);
  return { sweep: result.sweep, plan, planPath };
}

/** Reads a sweep file; its `plan` is relative to the file's directory. */
export async function loadSweepFile(path: string): Promise<LoadedSweep> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new LoadfleetError(
      ErrorCode.SWEEP_INVALID,
      `cannot read sweep file ${path}: ${err instanceof Error ? err.message : String(err)}`,
      {
        exitCode: ExitCode.INVALID_INPUT,
        cause: err,
      },
    );
  }
  return parseSweepText(text, path, dirname(path));
}
