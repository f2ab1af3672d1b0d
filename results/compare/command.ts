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
import { candidateAsTool } from './baselines/tool-ttft.js';
import { COMPARISON_DEFINITIONS } from './definitions.js';
import type { Comparison, FigureChange, RunSample } from './figures.js';
import { compareRuns, defaultGating } from './figures.js';
import { parseGateOn } from './gate-on.js';
import { minResamples } from './inference.js';
import type { Side } from './load.js';
import { loadSide } from './load.js';
import { comparisonPage } from './page.js';
import type { FloorByLevel } from './run-to-run-floor.js';
import { floorShares, parseFloorPct, RUN_TO_RUN_FLOOR_PCT } from './run-to-run-floor.js';

export interface CompareFlags {
  out?: string;
  arm?: string;
  baselineArm?: string;
  candidateArm?: string;
  thresholdPct: number;
  successThresholdPts: number;
  /** Two-sided interval coverage; default 1 − 2 × falseAlarm, so each end is the one-sided bound at the decision's level. */
  confidence?: number;
  /** With one run on a side: the run-to-run floor in % of the baseline, one number or p50=…,p95=…,p99=… (default RUN_TO_RUN_FLOOR_PCT). */
  runToRunFloorPct?: string;
  /** The exit code with --fail-on-regression when no gating figure regressed but one is undecided (default 0). */
  undecidedExit?: number;
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
  const confidence = f.confidence ?? 1 - 2 * f.falseAlarm;
  const floorPct =
    f.runToRunFloorPct === undefined ? { floor: RUN_TO_RUN_FLOOR_PCT, problem: null } : parseFloorPct(String(f.runToRunFloorPct));
  const undecidedExit = f.undecidedExit ?? ExitCode.OK;
  const usage = [
    !(confidence > 0 && confidence < 1) ? `--confidence ${confidence}: must be in (0, 1)` : '',
    !(f.falseAlarm > 0 && f.falseAlarm < 0.5) ? `--false-alarm ${f.falseAlarm}: must be in (0, 0.5)` : '',
    !(Number.isInteger(f.resamples) && f.resamples >= 100) ? `--resamples ${f.resamples}: must be an integer >= 100` : '',
    !(f.thresholdPct >= 0) ? `--threshold-pct ${f.thresholdPct}: must be >= 0` : '',
    !(f.successThresholdPts >= 0) ? `--success-threshold-pts ${f.successThresholdPts}: must be >= 0` : '',
    floorPct.problem ?? '',
    !(Number.isInteger(undecidedExit) && undecidedExit >= 0 && undecidedExit <= 125)
      ? `--undecided-exit ${undecidedExit}: must be an integer from 0 to 125`
      : '',
  ].filter(Boolean);
  if (usage.length > 0)
    throw new LoadfleetError(ErrorCode.USAGE, 'invalid compare options', { exitCode: ExitCode.INVALID_INPUT, details: usage });
  const foreign =
    f.baselineFormat !== undefined || !isLoadfleetDir(baselineDir)
      ? await readForeignBaseline(baselineDir, { format: f.baselineFormat, benchmark: f.baselineBenchmark })
      : null;
  const loaded = await loadSide(candidateDir, f.candidateArm ?? f.arm);
  const toolClass = foreign ? baselineClass(loaded.runs, f.class) : null;
  const fromTool = foreign && toolClass !== null ? baselineRun(foreign.baseline, toolClass) : null;
  // A tool's TTFT is its own definition: the candidate's is re-read to match, or refused.
  const asTool = foreign && toolClass !== null ? candidateAsTool(loaded.runs, toolClass, foreign.baseline) : null;
  const candidate: Side = asTool ? { ...loaded, runs: asTool.runs } : loaded;
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
  const fewest = minResamples(gate.keys.length, f.falseAlarm);
  if (f.resamples < fewest)
    throw new LoadfleetError(ErrorCode.USAGE, `--resamples ${f.resamples} is too few for ${gate.keys.length} gating figures`, {
      exitCode: ExitCode.INVALID_INPUT,
      details: [
        `Holm's first step needs a p-value of at most ${f.falseAlarm} / ${gate.keys.length} = ${round4(f.falseAlarm / gate.keys.length)}, and a bootstrap p-value is never below 1 / (resamples + 1) = ${round4(1 / (f.resamples + 1))}: even a certain regression could not be flagged`,
        `use --resamples ${fewest} or more (at least gating figures / false-alarm rate), or gate on fewer figures`,
      ],
    });
  const options = {
    confidence,
    runToRunFloor: floorShares(floorPct.floor ?? RUN_TO_RUN_FLOOR_PCT),
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
            ...(asTool ? [asTool.note] : []),
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
    comparisonPage({ ...comparison, confidence }, baseline.runs, candidate.runs, {
      baseline: baseline.label,
      candidate: candidate.label,
      source,
    }),
  );
  for (const line of comparisonTable(comparison, confidence, f.falseAlarm)) print(line);
  print(`  comparison: ${join(out, 'comparison.json')}`);
  print(`  report: ${join(out, 'report.html')}`);
  const exit = gateExit(comparison, undecidedExit);
  if (f.failOnRegression && exit.line) print(exit.line);
  return f.failOnRegression ? exit.code : ExitCode.OK;
}

/**
 * The exit code --fail-on-regression gives, and the line that says why: REGRESSED when a gating
 * figure regressed; undecidedExit when none did but one is undecided (beyond its interval, not
 * beyond the margin one run a side cannot measure); OK otherwise.
 */
export function gateExit(c: Pick<Comparison, 'regressed' | 'undecided'>, undecidedExit: number): { code: number; line: string | null } {
  if (c.regressed.length > 0)
    return {
      code: ExitCode.REGRESSED,
      line: `exit ${ExitCode.REGRESSED} (--fail-on-regression): gating figures regressed: ${c.regressed.join(', ')}`,
    };
  if (c.undecided.length > 0)
    return {
      code: undecidedExit,
      line: `exit ${undecidedExit} (--fail-on-regression, --undecided-exit ${undecidedExit}): cannot decide: ${c.undecided.join(', ')} changed beyond their intervals but not beyond what one run a side cannot measure (timing uncertainty and run-to-run floor); compare experiments with repeats for a sharp gate`,
    };
  return { code: ExitCode.OK, line: null };
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

/** comparison.json's content. */
export function comparisonJson(
  c: Comparison,
  b: Side,
  cand: Side,
  o: {
    confidence: number;
    falseAlarm: number;
    resamples: number;
    relativeThreshold: number;
    successThreshold: number;
    seed: string;
    runToRunFloor?: number | FloorByLevel;
  },
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
    run_to_run_floor: c.method === 'two-level-repeats' ? null : (o.runToRunFloor ?? 0),
    ttft_basis: c.ttft_basis,
    gating: c.gating,
    limits: c.limits,
    regressed: c.regressed,
    improved: c.improved,
    undecided: c.undecided,
    reported: c.reported,
    classes: c.classes,
    definitions: COMPARISON_DEFINITIONS,
  };
}

const SHOWN = /^(ttft|tpot|itl|e2e)_p(50|95|99)_ms$|^success_rate$|^goodput_rps$/;

/** The terminal table: one line per class, window and figure, gating figures marked and their detectable change stated. */
export function comparisonTable(c: Comparison, confidence: number, falseAlarm = 0.05): string[] {
  const pc = (x: number) => `${Math.round(x * 1e4) / 100}%`;
  const lines = [
    `compare (${c.method}, ${pc(confidence)} two-sided intervals: each end a one-sided ${pc(1 - (1 - confidence) / 2)} bound): gating ${c.gating.length} figure(s) one-sided at a family-wise false-alarm rate of ${pc(falseAlarm)} (Holm): ${c.regressed.length} regressed, ${c.improved.length} improved, ${c.undecided.length} undecided; other figures (reported, not gating): ${c.reported.regressed.length} regressed, ${c.reported.improved.length} improved, ${c.reported.undecided.length} undecided`,
  ];
  const n = (x: number | null) => (x === null ? '–' : String(Math.round(x * 1000) / 1000));
  const pct = (x: number | null) => (x === null ? '' : ` (${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%)`);
  const row = (cls: string, w: string, f: FigureChange) => {
    const side = (v: number | null, who: 'baseline' | 'candidate') => (f.failures_decide.includes(who) ? '+inf' : n(v));
    const interval = f.interval ? `[${n(f.interval.low)}, ${n(f.interval.high)}]` : 'no interval';
    const margin =
      f.gating && f.margin && f.margin.total > 0
        ? `  margin ${n(f.margin.total)} (timing ${n(f.margin.timing)} + run-to-run ${n(f.margin.run_to_run)})`
        : '';
    const mde = f.gating ? `  detectable ≥ ${n(f.detectable_change)}${pct(f.detectable_change_relative)}${margin}` : '';
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
