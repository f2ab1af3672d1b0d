// Reads an experiment file and the plan it names (relative to the experiment file), and validates
// both: the document, the plan, and every arm's effective plan. Everything found is reported at
// once in one LF_EXPERIMENT_INVALID error (exit 2), so nothing runs until the whole file is right.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ErrorCode, ExitCode, LoadfleetError } from './errors.js';
import type { Compare, LoadedExperiment } from './experiment.js';
import { validateArms, validateExperimentDoc } from './experiment-validate.js';
import type { Plan } from './plan.js';
import { parseDocumentText } from './plan-load.js';
import { validatePlan } from './plan-validate.js';
import { isObj } from './validate-kit.js';
import { hasWorkloadFiles, readWorkloadInputs, resolveWorkloadPaths } from './workload-files.js';

/** An experiment that failed validation; `details` are `<json path>: <what is wrong>` lines. */
export class ExperimentInvalidError extends LoadfleetError {
  constructor(problems: readonly string[], source: string) {
    super(ErrorCode.EXPERIMENT_INVALID, `${source} is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'})`, {
      exitCode: ExitCode.INVALID_INPUT,
      details: problems,
    });
  }
}

/** Loads and validates an experiment file; throws ExperimentInvalidError listing every problem. */
export async function loadExperimentFile(path: string): Promise<LoadedExperiment> {
  const text = await readFile(path, 'utf8').catch((err: Error) => {
    throw new LoadfleetError(ErrorCode.EXPERIMENT_INVALID, `cannot read experiment ${path}: ${err.message}`, {
      exitCode: ExitCode.INVALID_INPUT,
    });
  });
  const parsed = parseDocumentText(text, path);
  if (!parsed.ok) throw new ExperimentInvalidError(parsed.problems, path);
  const doc = validateExperimentDoc(parsed.value);
  const problems = doc.ok ? [] : [...doc.problems];
  const raw = isObj(parsed.value) ? parsed.value : {};
  const planRef = typeof raw['plan'] === 'string' && raw['plan'] !== '' ? raw['plan'] : undefined;
  const planPath = planRef === undefined ? undefined : resolve(dirname(path), planRef);
  const plan = planPath === undefined ? undefined : await readPlan(planPath, planRef!, problems);
  let armPlans: Plan[] = [];
  if (plan && Array.isArray(raw['arms'])) {
    const arms = validateArms(raw['arms'], plan, doc.ok ? doc.experiment.compare : rawCompare(raw['compare']));
    if (arms.ok) armPlans = arms.armPlans;
    else problems.push(...arms.problems);
  }
  if (problems.length > 0 || !doc.ok || !plan || !planPath) throw new ExperimentInvalidError(problems, path);
  return { experiment: doc.experiment, planPath, plan, armPlans };
}

// A compare block whose three names are strings is checked even when other parts of the file are not valid.
function rawCompare(v: unknown): Compare | undefined {
  if (!isObj(v)) return undefined;
  const { metric, baseline, treatment } = v;
  return typeof metric === 'string' && typeof baseline === 'string' && typeof treatment === 'string'
    ? { metric, baseline, treatment }
    : undefined;
}

// The plan's own problems are listed under `plan`, each with the plan's path inside it.
async function readPlan(planPath: string, planRef: string, problems: string[]): Promise<Plan | undefined> {
  let text: string;
  try {
    text = await readFile(planPath, 'utf8');
  } catch (err) {
    problems.push(`plan: cannot read ${JSON.stringify(planRef)} (${(err as Error).message}); the path is relative to the experiment file`);
    return undefined;
  }
  const parsed = parseDocumentText(text, planPath);
  const result = parsed.ok ? validatePlan(parsed.value) : parsed;
  if (result.ok) {
    // Trace and dataset paths are relative to the plan file, as when the plan runs alone.
    const plan = resolveWorkloadPaths(result.plan, dirname(planPath));
    if (hasWorkloadFiles(plan)) for (const p of (await readWorkloadInputs(plan)).problems) problems.push(`plan (${planRef}): ${p}`);
    return plan;
  }
  for (const p of result.problems) problems.push(`plan (${planRef}): ${p}`);
  return undefined;
}
