// `coordinator compare BASELINE CANDIDATE`: is the candidate worse than the baseline, beyond noise?
// Reads both sides (run or experiment directories), refuses sides of different plans or schedules
// unless told, prints the verdict table, writes comparison.json and report.html, and with
// --fail-on-regression exits REGRESSED (5) when any figure regressed.
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import type { Comparison, FigureChange, RunSample } from './figures.js';
import { COMPARISON_DEFINITIONS, compareRuns } from './figures.js';
import type { Side } from './load.js';
import { loadSide } from './load.js';
import { comparisonPage } from './page.js';

export interface CompareFlags {
  out?: string;
  arm?: string;
  baselineArm?: string;
  candidateArm?: string;
  thresholdPct: number;
  successThresholdPts: number;
  confidence: number;
  resamples: number;
  seed: string;
  failOnRegression?: boolean;
  allowDifferentPlans?: boolean;
}

/** Why two sides are not comparable (empty when they are). */
export function comparabilityProblems(b: readonly RunSample[], c: readonly RunSample[]): string[] {
  const problems: string[] = [];
  const plans = new Set([...b, ...c].map((r) => r.planSha256));
  const schedules = new Set([...b, ...c].map((r) => r.scheduleSha256));
  if (plans.size > 1)
    problems.push(
      `the runs ran ${plans.size} different plans (SHA-256 of the plan without its target: ${[...plans].map((s) => s.slice(0, 12)).join(', ')})`,
    );
  if (schedules.size > 1)
    problems.push(
      `the runs offered ${schedules.size} different schedules (schedule_sha256 ${[...schedules].map((s) => s.slice(0, 12)).join(', ')})`,
    );
  return problems;
}

/** Runs the command; returns the exit code. */
export async function compareCommand(
  baselineDir: string,
  candidateDir: string,
  f: CompareFlags,
  print: (line: string) => void,
): Promise<number> {
  const usage = [
    !(f.confidence > 0 && f.confidence < 1) ? `--confidence ${f.confidence}: must be in (0, 1)` : '',
    !(Number.isInteger(f.resamples) && f.resamples >= 100) ? `--resamples ${f.resamples}: must be an integer >= 100` : '',
    !(f.thresholdPct >= 0) ? `--threshold-pct ${f.thresholdPct}: must be >= 0` : '',
    !(f.successThresholdPts >= 0) ? `--success-threshold-pts ${f.successThresholdPts}: must be >= 0` : '',
  ].filter(Boolean);
  if (usage.length > 0)
    throw new LoadfleetError(ErrorCode.USAGE, 'invalid compare options', { exitCode: ExitCode.INVALID_INPUT, details: usage });
  const baseline = await loadSide(baselineDir, f.baselineArm ?? f.arm);
  const candidate = await loadSide(candidateDir, f.candidateArm ?? f.arm);
  const problems = comparabilityProblems(baseline.runs, candidate.runs);
  if (problems.length > 0 && !f.allowDifferentPlans)
    throw new LoadfleetError(ErrorCode.NOT_COMPARABLE, 'baseline and candidate are not comparable', {
      exitCode: ExitCode.INVALID_INPUT,
      details: [...problems, 'a change of plan or schedule changes the load itself; pass --allow-different-plans to compare anyway'],
    });
  const options = {
    confidence: f.confidence,
    resamples: f.resamples,
    relativeThreshold: f.thresholdPct / 100,
    successThreshold: f.successThresholdPts / 100,
    seed: f.seed,
  };
  const comparison = compareRuns(baseline.runs, candidate.runs, options);
  const json = comparisonJson(comparison, baseline, candidate, options, problems);
  const out = resolve(f.out ?? join('comparisons', `${basename(resolve(baselineDir))}-vs-${basename(resolve(candidateDir))}`));
  await mkdir(out, { recursive: true });
  await writeFile(join(out, 'comparison.json'), `${JSON.stringify(json, null, 2)}\n`);
  await writeFile(
    join(out, 'report.html'),
    comparisonPage({ ...comparison, confidence: f.confidence }, baseline.runs, candidate.runs, {
      baseline: baseline.label,
      candidate: candidate.label,
    }),
  );
  for (const line of comparisonTable(comparison, f.confidence)) print(line);
  print(`  comparison: ${join(out, 'comparison.json')}`);
  print(`  report: ${join(out, 'report.html')}`);
  if (f.failOnRegression && comparison.regressed.length > 0) {
    print(`exit ${ExitCode.REGRESSED} (--fail-on-regression): regressed ${comparison.regressed.join(', ')}`);
    return ExitCode.REGRESSED;
  }
  return ExitCode.OK;
}

function comparisonJson(
  c: Comparison,
  b: Side,
  cand: Side,
  o: { confidence: number; resamples: number; relativeThreshold: number; successThreshold: number; seed: string },
  problems: string[],
) {
  return {
    schema: 'loadfleet.comparison/v1',
    baseline: { label: b.label, runs: c.baseline_runs, dirs: b.dirs },
    candidate: { label: cand.label, runs: c.candidate_runs, dirs: cand.dirs },
    comparable: { same_plan_and_schedule: problems.length === 0, problems },
    method: c.method,
    confidence: o.confidence,
    resamples: o.resamples,
    seed: o.seed,
    thresholds: { relative: o.relativeThreshold, success_rate_points: o.successThreshold },
    regressed: c.regressed,
    improved: c.improved,
    classes: c.classes,
    definitions: COMPARISON_DEFINITIONS,
  };
}

const SHOWN = /^(ttft|tpot|itl|e2e)_p(50|95|99)_ms$|^success_rate$|^goodput_rps$/;

/** The terminal table: one line per class, window and figure, the verdict last. */
export function comparisonTable(c: Comparison, confidence: number): string[] {
  const lines = [`compare (${c.method}, ${confidence * 100}% intervals): ${c.regressed.length} regressed, ${c.improved.length} improved`];
  const n = (x: number | null) => (x === null ? '–' : String(Math.round(x * 1000) / 1000));
  const row = (cls: string, w: string, f: FigureChange) => {
    const rel = f.delta_relative === null ? '' : ` (${f.delta_relative >= 0 ? '+' : ''}${(f.delta_relative * 100).toFixed(1)}%)`;
    const interval = f.interval ? `[${n(f.interval.low)}, ${n(f.interval.high)}]` : 'no interval';
    return `  ${cls.padEnd(10)} ${w.padEnd(8)} ${f.figure.padEnd(14)} ${n(f.baseline).padStart(10)} → ${n(f.candidate).padStart(10)}  Δ ${`${n(f.delta)}${rel}`.padEnd(20)} ${interval.padEnd(22)} ${f.verdict.toUpperCase()}`;
  };
  lines.push(
    `  ${'class'.padEnd(10)} ${'window'.padEnd(8)} ${'figure'.padEnd(14)} ${'baseline'.padStart(10)}   ${'candidate'.padStart(10)}  ${'Δ'.padEnd(22)} ${'interval of Δ'.padEnd(22)} verdict`,
  );
  for (const [cls, windows] of Object.entries(c.classes))
    for (const [w, figs] of Object.entries(windows)) for (const f of figs) if (SHOWN.test(f.figure)) lines.push(row(cls, w, f));
  return lines;
}
