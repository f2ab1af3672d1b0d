// `coordinator compare BASELINE CANDIDATE`: is the candidate worse than the baseline, beyond noise?
// Reads both sides (run or experiment directories; the baseline may also be another tool's file:
// vLLM bench serve, GuideLLM, AIPerf or an llm-d Benchmark Report), refuses loadfleet sides of
// different plans or schedules unless told, prints the verdict table, writes comparison.json and
// report.html, and with --fail-on-regression exits REGRESSED (5) when a gating figure regressed.
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import { isLoadfleetDir, readForeignBaseline } from './baselines/read.js';
import { baselineLimits, baselineSource, ONE_RUN_LIMIT } from './baselines/statement.js';
import { baselineRun } from './baselines/to-sample.js';
import { COMPARISON_DEFINITIONS } from './definitions.js';
import type { Comparison, FigureChange, RunSample } from './figures.js';
import { compareRuns, defaultGating } from './figures.js';
import { parseGateOn } from './gate-on.js';
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
  falseAlarm: number;
  gateOn?: string;
  resamples: number;
  seed: string;
  failOnRegression?: boolean;
  allowDifferentPlans?: boolean;
  /** Read the baseline as this tool's file (vllm, guidellm, aiperf, benchmark-report) instead of by its content. */
  baselineFormat?: string;
  /** Which benchmark of a baseline report that holds several (GuideLLM). */
  baselineBenchmark?: number;
  /** The candidate's class a tool's baseline is compared with, when the candidate has several. */
  class?: string;
}

/** The candidate class a one-workload baseline from another tool stands for. */
export function baselineClass(runs: readonly RunSample[], chosen: string | undefined): string {
  const classes = Object.keys(runs[0]?.classes ?? {});
  if (chosen !== undefined && classes.includes(chosen)) return chosen;
  if (chosen === undefined && classes.length === 1) return classes[0]!;
  throw new LoadfleetError(
    ErrorCode.USAGE,
    chosen === undefined ? 'the candidate has several classes' : `the candidate has no class ${chosen}`,
    {
      exitCode: ExitCode.INVALID_INPUT,
      details: [
        `a baseline from another tool holds one workload: name the candidate's class it stands for with --class (classes: ${classes.join(', ')})`,
      ],
    },
  );
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
    !(f.falseAlarm > 0 && f.falseAlarm < 0.5) ? `--false-alarm ${f.falseAlarm}: must be in (0, 0.5)` : '',
    !(Number.isInteger(f.resamples) && f.resamples >= 100) ? `--resamples ${f.resamples}: must be an integer >= 100` : '',
    !(f.thresholdPct >= 0) ? `--threshold-pct ${f.thresholdPct}: must be >= 0` : '',
    !(f.successThresholdPts >= 0) ? `--success-threshold-pts ${f.successThresholdPts}: must be >= 0` : '',
  ].filter(Boolean);
  if (usage.length > 0)
    throw new LoadfleetError(ErrorCode.USAGE, 'invalid compare options', { exitCode: ExitCode.INVALID_INPUT, details: usage });
  const foreign =
    f.baselineFormat !== undefined || !isLoadfleetDir(baselineDir)
      ? await readForeignBaseline(baselineDir, { format: f.baselineFormat, benchmark: f.baselineBenchmark })
      : null;
  const candidate = await loadSide(candidateDir, f.candidateArm ?? f.arm);
  const fromTool = foreign && baselineRun(foreign.baseline, baselineClass(candidate.runs, f.class));
  const baseline: Side =
    foreign && fromTool
      ? { label: `${foreign.file} (${foreign.baseline.tool}, ${foreign.baseline.data})`, runs: [fromTool.run], dirs: [] }
      : await loadSide(baselineDir, f.baselineArm ?? f.arm);
  const problems = foreign ? [] : comparabilityProblems(baseline.runs, candidate.runs);
  if (problems.length > 0 && !f.allowDifferentPlans)
    throw new LoadfleetError(ErrorCode.NOT_COMPARABLE, 'baseline and candidate are not comparable', {
      exitCode: ExitCode.INVALID_INPUT,
      details: [...problems, 'a change of plan or schedule changes the load itself; pass --allow-different-plans to compare anyway'],
    });
  const windows = Object.fromEntries(Object.entries(baseline.runs[0]!.classes).map(([c, w]) => [c, Object.keys(w)]));
  const gate =
    f.gateOn === undefined ? { keys: defaultGating([...baseline.runs, ...candidate.runs]), problems: [] } : parseGateOn(f.gateOn, windows);
  if (gate.problems.length > 0)
    throw new LoadfleetError(ErrorCode.USAGE, 'invalid --gate-on', { exitCode: ExitCode.INVALID_INPUT, details: gate.problems });
  if (f.failOnRegression && gate.keys.length === 0)
    throw new LoadfleetError(ErrorCode.USAGE, '--fail-on-regression has nothing to gate on', {
      exitCode: ExitCode.INVALID_INPUT,
      details: [
        'no class declares an SLO, so no figure gates by default; name the figures with --gate-on (e.g. --gate-on ttft_p95_ms,success_rate)',
      ],
    });
  const options = {
    confidence: f.confidence,
    falseAlarm: f.falseAlarm,
    gateOn: gate.keys,
    resamples: f.resamples,
    relativeThreshold: f.thresholdPct / 100,
    successThreshold: f.successThresholdPts / 100,
    seed: f.seed,
  };
  const compared = compareRuns(baseline.runs, candidate.runs, options);
  // A tool's baseline restates the one-run limit in its own terms (aggregate points, or its requests in blocks).
  const comparison =
    foreign && fromTool
      ? {
          ...compared,
          limits: [
            ...baselineLimits(foreign.baseline, fromTool.approximated, candidate.runs.length),
            ...compared.limits.filter((l) => !ONE_RUN_LIMIT.test(l)),
          ],
        }
      : compared;
  const source = foreign ? baselineSource(foreign.baseline, foreign.file) : null;
  const json = comparisonJson(comparison, baseline, candidate, options, problems, source);
  const out = resolve(f.out ?? join('comparisons', `${basename(resolve(baselineDir))}-vs-${basename(resolve(candidateDir))}`));
  await mkdir(out, { recursive: true });
  await writeFile(join(out, 'comparison.json'), `${JSON.stringify(json, null, 2)}\n`);
  await writeFile(
    join(out, 'report.html'),
    comparisonPage({ ...comparison, confidence: f.confidence }, baseline.runs, candidate.runs, {
      baseline: baseline.label,
      candidate: candidate.label,
      source,
    }),
  );
  for (const line of comparisonTable(comparison, f.confidence, f.falseAlarm)) print(line);
  print(`  comparison: ${join(out, 'comparison.json')}`);
  print(`  report: ${join(out, 'report.html')}`);
  if (f.failOnRegression && comparison.regressed.length > 0) {
    print(`exit ${ExitCode.REGRESSED} (--fail-on-regression): gating figures regressed: ${comparison.regressed.join(', ')}`);
    return ExitCode.REGRESSED;
  }
  return ExitCode.OK;
}

/** comparison.json's content. */
export function comparisonJson(
  c: Comparison,
  b: Side,
  cand: Side,
  o: { confidence: number; falseAlarm: number; resamples: number; relativeThreshold: number; successThreshold: number; seed: string },
  problems: string[],
  source: ReturnType<typeof baselineSource> | null = null,
) {
  return {
    schema: 'loadfleet.comparison/v1',
    baseline: { label: b.label, runs: c.baseline_runs, dirs: b.dirs, source },
    candidate: { label: cand.label, runs: c.candidate_runs, dirs: cand.dirs },
    comparable: { same_plan_and_schedule: source ? null : problems.length === 0, problems },
    method: c.method,
    confidence: o.confidence,
    false_alarm: o.falseAlarm,
    resamples: o.resamples,
    seed: o.seed,
    thresholds: { relative: o.relativeThreshold, success_rate_points: o.successThreshold },
    gating: c.gating,
    limits: c.limits,
    regressed: c.regressed,
    improved: c.improved,
    reported: c.reported,
    classes: c.classes,
    definitions: COMPARISON_DEFINITIONS,
  };
}

const SHOWN = /^(ttft|tpot|itl|e2e)_p(50|95|99)_ms$|^success_rate$|^goodput_rps$/;

/** The terminal table: one line per class, window and figure, gating figures marked and their detectable change stated. */
export function comparisonTable(c: Comparison, confidence: number, falseAlarm = 0.05): string[] {
  const lines = [
    `compare (${c.method}, ${confidence * 100}% intervals): gating ${c.gating.length} figure(s) at a family-wise false-alarm rate of ${falseAlarm * 100}% (Holm): ${c.regressed.length} regressed, ${c.improved.length} improved; other figures (reported, not gating): ${c.reported.regressed.length} regressed, ${c.reported.improved.length} improved`,
  ];
  const n = (x: number | null) => (x === null ? '–' : String(Math.round(x * 1000) / 1000));
  const pct = (x: number | null) => (x === null ? '' : ` (${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%)`);
  const row = (cls: string, w: string, f: FigureChange) => {
    const side = (v: number | null, who: 'baseline' | 'candidate') => (f.failures_decide.includes(who) ? '+inf' : n(v));
    const interval = f.interval ? `[${n(f.interval.low)}, ${n(f.interval.high)}]` : 'no interval';
    const mde = f.gating ? `  detectable ≥ ${n(f.detectable_change)}${pct(f.detectable_change_relative)}` : '';
    return `  ${cls.padEnd(10)} ${w.padEnd(8)} ${f.figure.padEnd(14)}${f.gating ? '*' : ' '} ${side(f.baseline, 'baseline').padStart(10)} → ${side(f.candidate, 'candidate').padStart(10)}  Δ ${`${n(f.delta)}${pct(f.delta_relative)}`.padEnd(20)} ${interval.padEnd(22)} ${f.verdict.toUpperCase()}${mde}`;
  };
  lines.push(
    `  ${'class'.padEnd(10)} ${'window'.padEnd(8)} ${'figure'.padEnd(15)} ${'baseline'.padStart(10)}   ${'candidate'.padStart(10)}  ${'Δ'.padEnd(22)} ${'interval of Δ'.padEnd(22)} verdict (* gates)`,
  );
  for (const [cls, windows] of Object.entries(c.classes))
    for (const [w, figs] of Object.entries(windows)) for (const f of figs) if (SHOWN.test(f.figure)) lines.push(row(cls, w, f));
  for (const l of c.limits) lines.push(`  note: ${l}`);
  return lines;
}
