#!/usr/bin/env node
// `coordinator`: runs a plan across a fleet of N agents and writes one merged, aligned run
// directory; runs sweeps and experiments (arms × repeats) over one fleet and rebuilds their analysis.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { analyzeCommand } from '../results/analysis/command.js';
import { runDirsUnder, writeBenchmarkReports } from '../results/benchmark-report-write.js';
import { compareCommand } from '../results/compare/command.js';
import { writeReports } from '../results/report/index.js';
import { sloExitCode } from '../results/slo-gate.js';
import { uploadCommand } from '../results/upload/command.js';
import { ErrorCode, ExitCode, exitCodeOf, formatError, LoadfleetError } from '../shared/errors.js';
import type { Plan } from '../shared/plan.js';
import { loadPlanFile } from '../shared/plan-load.js';
import { addVersionAndExamples } from './cli-help.js';
import type { RunFlags } from './cli-options.js';
import { addFailOnSloOption, addRunFlags, recordsMode, runOptionsFromFlags } from './cli-options.js';
import { withCostFlags } from './cost/flags.js';
import { DEFAULT_PLAN_FILE } from './default-plan.js';
import { runExperiment } from './experiment/run-experiment.js';
import { journalPath } from './journal/run-journal.js';
import { planCommand } from './plan-dry-run/command.js';
import { resumeRun, unfinishedRuns } from './recover.js';
import type { RunResult } from './run.js';
import { executeRun } from './run.js';
import { installStopSignals } from './stop-signals.js';
import { sweepCommand } from './sweep/command.js';

interface StartOptions extends RunFlags {
  plan?: string;
  out: string;
  failOnSlo?: boolean;
  failOnNotEvaluable?: boolean;
  records?: Plan['records'];
}

async function start(o: StartOptions): Promise<number> {
  const plan = withCostFlags(await loadPlanFile(o.plan ?? DEFAULT_PLAN_FILE, o.records === undefined ? {} : { records: o.records }), o);
  // A coordinator restarted with the same command (a container restart) completes the run it had
  // not finished, instead of starting another beside it.
  const { here, elsewhere, otherPlan, noHeader } = await unfinishedRuns(o.out, plan);
  const say = (line: string): void => void process.stderr.write(`[coordinator] ${line}\n`);
  for (const dir of elsewhere)
    say(`${dir} holds the journal of a run written on another host: \`coordinator resume ${dir}\` recovers it if it is over`);
  for (const dir of otherPlan)
    say(`${dir} was not finished, but it ran another plan: left as it is (\`coordinator resume ${dir}\` completes it); starting a new run`);
  for (const dir of noHeader) say(`${dir} holds a journal without a readable header: its run never started its load, nothing to recover`);
  // The newest is the one this command was running; older ones of the same plan are named, each with its command.
  for (const dir of here.slice(0, -1))
    say(`${dir} was not finished either (an older run of this plan): \`coordinator resume ${dir}\` completes it`);
  const newest = here.at(-1);
  if (newest) {
    say(`${newest} was not finished (its journal is there): recovering it instead of starting a new run`);
    try {
      return await resume(newest, o);
    } catch (err) {
      // A journal that cannot be recovered (set aside when damaged) must not stop every restart the same way.
      if (!(err instanceof LoadfleetError && err.code === ErrorCode.JOURNAL_UNREADABLE)) throw err;
      say(formatError(err));
      say(`${newest} cannot be recovered: starting a new run`);
    }
  }
  const flags = await runOptionsFromFlags(o);
  const result = await executeRun({ ...flags.options, plan, outDir: o.out }).finally(() => flags.close());
  return report(result, o);
}

async function resume(dir: string, o: RunFlags & Pick<StartOptions, 'failOnSlo' | 'failOnNotEvaluable'>): Promise<number> {
  // Finished before it was killed (its run.json written, its journal removed): nothing to do, and a
  // restarted `resume` must not fail on it over and over.
  if (existsSync(join(dir, 'run.json')) && !existsSync(journalPath(dir))) {
    process.stderr.write(`[coordinator] ${dir} is finished (its run.json is written and its journal removed): nothing to recover\n`);
    return ExitCode.OK;
  }
  const flags = await runOptionsFromFlags(o);
  const result = await resumeRun(dir, { ...flags.options, plan: undefined as never, outDir: dir }).finally(() => flags.close());
  return report(result, o);
}

async function report(result: RunResult, o: Pick<StartOptions, 'failOnSlo' | 'failOnNotEvaluable'>): Promise<number> {
  process.stdout.write(`${result.summaryLines.join('\n')}\n`);
  return sloExitCode(
    result.dir,
    result.status,
    { failOnSlo: o.failOnSlo === true, failOnNotEvaluable: o.failOnNotEvaluable === true },
    (line) => void process.stderr.write(`${line}\n`),
  );
}

const program = new Command('coordinator')
  .description('loadfleet coordinator: one plan, N agents, one merged and aligned run.')
  .exitOverride();

addFailOnSloOption(
  addRunFlags(program.command('start').description('run a plan (default: the built-in realtime + batch plan against engine-sim)'))
    .option('--plan <file>', 'plan file (JSON or YAML, loadfleet.plan/v1)')
    .option('--out <dir>', 'directory for run directories', 'runs')
    .option(
      '--records <mode>',
      'request records the agents send: all, or sampled:K (every K-th request of each share; agents count and spool every request, verdicts come from their counts and merged histograms); sets plan.records',
      recordsMode,
    ),
).action(async (o: StartOptions) => {
  process.exitCode = await start(o);
});

addFailOnSloOption(
  addRunFlags(
    program
      .command('resume')
      .description(
        'complete a run whose coordinator stopped (killed, crashed) from its journal: listens where its agents connected (or --listen), takes them back within their grace and writes the run directory, marked recovered',
      ),
  ).argument('<run-dir>', 'the run directory (it holds journal/run.journal)'),
).action(async (dir: string, o: StartOptions) => {
  process.exitCode = await resume(dir, o);
});

addRunFlags(program.command('experiment').description('run an experiment (loadfleet.experiment/v1): arms × repeats, then analysis.json'))
  .argument('<file>', 'experiment file (JSON or YAML)')
  .option('--out <dir>', 'directory for experiment directories', 'experiments')
  .option(
    '--resume [dir]',
    'continue an experiment directory (default: the newest of this experiment under --out, or a new one when there is none yet)',
  )
  .action(async (file: string, o: RunFlags & { out: string; resume?: string | true }) => {
    const flags = await runOptionsFromFlags(o);
    process.exitCode = await runExperiment({
      file,
      outDir: o.out,
      ...(o.resume !== undefined && { resume: o.resume }),
      cost: o,
      run: flags.options,
      print,
    }).finally(() => flags.close());
  });

program
  .command('analyze')
  .description('rebuild analysis.json from an experiment directory, or from run directories of one experiment')
  .argument('<dir...>', 'an experiment directory, or run directories')
  .option('--experiment <file>', 'the experiment file, for run directories outside their experiment directory')
  .option('--out <file>', 'where to write analysis.json (default: in the experiment directory)')
  .action(async (dirs: string[], o: { experiment?: string; out?: string }) => {
    process.exitCode = await analyzeCommand(dirs, o, print, (line) => void process.stderr.write(`${line}\n`));
  });

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

program
  .command('compare')
  .description(
    "compare a candidate with a baseline (run or experiment directories): each figure's change with an interval that holds the runs' autocorrelation (and run-to-run variation with repeats), and a verdict; a few declared figures gate",
  )
  .argument(
    '<baseline>',
    "a run directory, an experiment directory (its repeats of one arm), or another tool's result: a vLLM bench serve JSON, a GuideLLM benchmarks.json, an AIPerf profile export (file or artifact directory) or an llm-d Benchmark Report",
  )
  .argument('<candidate>', 'a run directory, or an experiment directory')
  .option('--out <dir>', 'where to write comparison.json and report.html (default: comparisons/<baseline>-vs-<candidate>)')
  .option('--arm <name>', 'the arm to compare in experiment directories with several')
  .option('--baseline-arm <name>', 'the baseline arm, when it differs from the candidate arm')
  .option('--candidate-arm <name>', 'the candidate arm')
  .option('--threshold-pct <pct>', 'a latency or goodput change smaller than this share of the baseline is within noise', Number, 5)
  .option('--success-threshold-pts <pts>', 'a success-rate change smaller than this many points is within noise', Number, 1)
  .option('--confidence <c>', 'interval coverage', Number, 0.95)
  .option('--false-alarm <rate>', 'family-wise rate of false regressions over the gating figures (Holm)', Number, 0.05)
  .option(
    '--gate-on <figures>',
    "the figures that gate, comma-separated: figure, class/figure or class/window/figure (default: each class's SLO figures in window all)",
  )
  .option('--resamples <n>', 'bootstrap replicates per figure and side', Number, 1000)
  .option('--seed <s>', 'seed of the bootstrap (same inputs and seed, same intervals)', '1')
  .option('--fail-on-regression', `exit ${ExitCode.REGRESSED} when a gating figure regressed`)
  .option('--allow-different-plans', 'compare runs of different plans or schedules (refused by default)')
  .option(
    '--baseline-format <tool>',
    "read the baseline as this tool's file: vllm, guidellm, aiperf or benchmark-report (default: told by its content)",
  )
  .option(
    '--baseline-benchmark <n>',
    'the benchmark (0-based) of a baseline file that holds several (a GuideLLM report; a vLLM file written with --append-result)',
    Number,
  )
  .option('--class <name>', "the candidate's class a baseline from another tool stands for, when the candidate has several")
  .action(async (baseline: string, candidate: string, o: Parameters<typeof compareCommand>[2]) => {
    process.exitCode = await compareCommand(baseline, candidate, o, print);
  });

program
  .command('report')
  .description('(re)write report.html in a run directory or an experiment directory (and its runs)')
  .argument('<dir>', 'a run directory (run.json) or an experiment directory (analysis.json)')
  .action(async (dir: string) => {
    for (const path of await writeReports(dir)) process.stdout.write(`${path}\n`);
  });

program
  .command('benchmark-report')
  .description('(re)write the llm-d Benchmark Reports (v0.2.1, YAML and JSON) of a run, or of every run of a sweep or experiment')
  .argument('<dir>', 'a run directory, or a sweep or experiment directory holding runs')
  .action(async (dir: string) => {
    const runs = await runDirsUnder(dir);
    if (runs.length === 0)
      throw new LoadfleetError(ErrorCode.USAGE, `no run.json at or under ${dir}`, { exitCode: ExitCode.INVALID_INPUT });
    for (const run of runs) for (const path of await writeBenchmarkReports(run)) process.stdout.write(`${path}\n`);
  });

sweepCommand(program);
program
  .command('upload')
  .description(
    'upload a run, sweep or experiment directory to S3-compatible storage (credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL_S3)',
  )
  .argument('<dir>', 'the directory to upload (its name becomes the last part of the key prefix)')
  .argument('<url>', 's3://bucket[/prefix]')
  .action(async (dir: string, url: string) => {
    process.exitCode = await uploadCommand(dir, url, print);
  });
planCommand(program);
// Last, so every command above (and any added later) gets --version and its examples.
addVersionAndExamples(program);

async function main(): Promise<void> {
  try {
    await program.parseAsync();
  } catch (err) {
    const code = (err as { exitCode?: number; code?: string }).code?.startsWith('commander.')
      ? (err as { exitCode: number }).exitCode
      : undefined;
    if (code !== undefined) {
      process.exitCode = code === 0 ? ExitCode.OK : ExitCode.INVALID_INPUT;
      return;
    }
    process.stderr.write(`${formatError(err)}\n`);
    process.exitCode = exitCodeOf(err);
  }
}

// SIGTERM and SIGINT for the process's whole life: a run under way stops and writes its directory;
// with nothing under way the process exits (coordinator/stop-signals.ts).
installStopSignals((line) => void process.stderr.write(`${line}\n`));
await main();
// Sockets, timers and children are all closed by now; exit explicitly so nothing lingers.
process.exit(process.exitCode ?? 0);
