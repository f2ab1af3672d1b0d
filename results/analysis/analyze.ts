// The I/O around the pure analysis: read the run.json of each finished run (from an experiment
// directory's manifest, or from run directories given one by one), build analysis.json, write it
// atomically, and render a short table for the terminal.

import { join, relative, resolve } from 'node:path';
import { writeFileAtomic } from '../../shared/atomic-file.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import type { Experiment } from '../../shared/experiment.js';
import { formatFigure } from '../../shared/format.js';
import { stringifyExact } from '../../shared/json.js';
import type { Plan } from '../../shared/plan.js';
import { readRunFile, readRunJson } from '../../shared/run-read.js';
import { isObj } from '../../shared/validate-kit.js';
import { isFinished, readExperimentDir } from '../experiment-record.js';
import type { Spread3 } from './aggregate.js';
import { armVerdictLines } from './arm-slo.js';
import type { RunChecks } from './build.js';
import { buildAnalysis } from './build.js';
import type { Row } from './rows.js';
import { runRow } from './rows.js';

export const ANALYSIS_FILE = 'analysis.json';

/** A run directory to analyse, with its place in the experiment. */
export interface RunRef {
  dir: string;
  arm: string;
  repeat: number;
}

/** Builds the analysis of an experiment directory from its finished runs and writes `<dir>/analysis.json`. */
export async function analyzeExperimentDir(expDir: string, outFile?: string): Promise<{ path: string; analysis: Record<string, unknown> }> {
  const { record, manifest } = await readExperimentDir(expDir);
  const refs = manifest.runs.filter(isFinished).map((e) => ({ dir: join(expDir, e.run_dir!), arm: e.arm, repeat: e.repeat }));
  return writeAnalysis(
    outFile ?? join(expDir, ANALYSIS_FILE),
    record.experiment,
    Object.values(record.arm_plans),
    record.plan,
    refs,
    expDir,
  );
}

/** Builds the analysis from run directories whose run.json carries `experiment` tags. */
export async function analyzeRunDirs(
  dirs: readonly string[],
  experiment: Experiment,
  armPlans: readonly Plan[],
  basePlan: Plan,
  outFile: string,
  skipped: (line: string) => void,
  /** Run directories are written relative to this (their experiment directory), else absolute. */
  relativeTo?: string,
): Promise<{ path: string; analysis: Record<string, unknown> }> {
  const refs: RunRef[] = [];
  const seen = new Map<string, string>();
  for (const dir of dirs) {
    const run = await readRunFile(dir);
    const tag = run.status === 'failed' ? undefined : run.experiment;
    if (tag === undefined) {
      skipped(`${dir}: not part of an experiment (run.json has no experiment tag)`);
      continue;
    }
    const { arm, repeat } = tag;
    if (run.status !== 'completed' && run.status !== 'degraded') {
      skipped(`${dir}: status ${run.status} (only completed and degraded runs count)`);
      continue;
    }
    if (!experiment.arms.some((a) => a.name === arm)) {
      skipped(`${dir}: arm ${JSON.stringify(arm)} is not an arm of ${experiment.name}`);
      continue;
    }
    const key = `${arm}\u0000${repeat}`;
    if (seen.has(key)) {
      throw new LoadfleetError(
        ErrorCode.USAGE,
        `${dir} and ${seen.get(key)} are both ${JSON.stringify(arm)} repeat ${repeat}; pass one of them`,
        {
          exitCode: ExitCode.INVALID_INPUT,
        },
      );
    }
    seen.set(key, dir);
    refs.push({ dir, arm, repeat });
  }
  return writeAnalysis(outFile, experiment, armPlans, basePlan, refs, relativeTo);
}

async function writeAnalysis(
  path: string,
  experiment: Experiment,
  armPlans: readonly Plan[],
  basePlan: Plan,
  refs: readonly RunRef[],
  relativeTo: string | undefined,
): Promise<{ path: string; analysis: Record<string, unknown> }> {
  const classes = unique(armPlans.flatMap((p) => p.classes.map((c) => c.name)));
  const windows = unique(armPlans.flatMap((p) => (p.windows ?? []).map((w) => w.name)));
  const rows: Row[] = [];
  const runChecks: Record<string, RunChecks> = {};
  // Rows follow the experiment's arm order, then the repeat: the same order for any run order.
  const sorted = [...refs].sort(
    (a, b) =>
      experiment.arms.findIndex((x) => x.name === a.arm) - experiment.arms.findIndex((x) => x.name === b.arm) || a.repeat - b.repeat,
  );
  for (const ref of sorted) {
    const run = await readRunJson(ref.dir);
    const row = runRow(run, relativeTo ? relative(resolve(relativeTo), resolve(ref.dir)) : resolve(ref.dir), ref, classes, windows);
    rows.push(row);
    runChecks[row.run_name as string] = {
      data_quality: checksNotPassed(run.data_quality),
      slo_proof: checksNotPassed(run.slo_proof),
    };
  }
  const analysis = buildAnalysis({ experiment, planName: basePlan.name, target: targetWords(basePlan), classes, windows, rows, runChecks });
  await writeFileAtomic(path, `${stringifyExact(analysis, 2)}\n`);
  return { path, analysis };
}

// A check that did not pass, named with its status, e.g. "schedule kept: fail".
function checksNotPassed(section: unknown): string[] {
  if (!isObj(section)) return ['(not in run.json: not evaluated)'];
  const checks = Array.isArray(section['checks']) ? section['checks'] : [];
  return checks.filter((c) => isObj(c) && c['status'] !== 'pass').map((c) => `${String(c['name'])}: ${String(c['status'])}`);
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}

/** Words for where the load went, for the claim boundary. */
export function targetWords(plan: Plan): string {
  return plan.target
    ? `${plan.target.base_url} (model ${plan.target.model})`
    : 'the built-in engine-sim (a simulated vLLM replica behind a flow-control gateway, not real hardware)';
}

/** A few lines for the terminal: the compared figure per arm, the gates, the comparison and the answer. */
export function analysisTable(analysis: Record<string, unknown>, experiment: Pick<Experiment, 'compare'>): string[] {
  const metric = experiment.compare.metric;
  const arms = analysis['by_arm'] as Record<string, Record<string, unknown>>;
  const lines = [`${'arm'.padEnd(40)} runs  ${`${metric} median [min – max]`.padEnd(48)} stable  data_quality  slo_proof`];
  for (const [name, s] of Object.entries(arms)) {
    const f = s[metric] as Spread3;
    // For people: rounded with the unit, thousands separated (analysis.json keeps the figures as computed).
    const unit = metric.endsWith('_ms') ? ' ms' : metric.endsWith('_pct') ? '%' : '';
    const figure = f.median === null ? '-' : `${formatFigure(f.median)}${unit} [${formatFigure(f.min)} – ${formatFigure(f.max)}${unit}]`;
    const spread = (s['repeat_spread'] as { max_over_min: number | null }).max_over_min;
    lines.push(
      `${name.slice(0, 40).padEnd(40)} ${String(s['runs']).padStart(4)}  ${figure.padEnd(48)} ${`${s['stable'] ? 'yes' : 'no'} (${spread ?? '-'}×)`.padEnd(7)} ${String(s['all_data_quality_valid']).padEnd(13)} ${String(s['all_slo_proof_valid'])}`,
    );
  }
  const cmp = Object.entries(analysis['comparison'] as Record<string, unknown>)
    .slice(0, 2)
    .map(([k, v]) => `${k} ${typeof v === 'number' ? formatFigure(v) : (v ?? '-')}`)
    .join(', ');
  lines.push(...armVerdictLines(arms));
  lines.push(`comparison: ${cmp}`, `answer: ${String(analysis['answer'])}`);
  return lines;
}
