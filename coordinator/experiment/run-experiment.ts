// `coordinator experiment`: gathers one fleet of agents (local or remote) and runs every arm ×
// repeat on it as a normal run into `<expdir>/runs/`, keeps manifest.json current after every
// change, and writes analysis.json once every run has finished. `--resume` continues a directory: finished runs (completed or degraded)
// are kept, aborted, crashed or missing ones are run again.
import { mkdir, readdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { analysisTable, analyzeExperimentDir } from '../../results/analysis/analyze.js';
import type { ExperimentRecord, Manifest, ManifestEntry } from '../../results/experiment-record.js';
import {
  experimentRecord,
  isFinished,
  newManifest,
  readExperimentDir,
  writeManifest,
  writeRecord,
} from '../../results/experiment-record.js';
import { writeExperimentReport } from '../../results/report/index.js';
import { ErrorCode, ExitCode, formatError, LoadfleetError } from '../../shared/errors.js';
import { loadExperimentFile } from '../../shared/experiment-load.js';
import type { CostFlags } from '../cost/flags.js';
import { withCostFlags } from '../cost/flags.js';
import type { Fleet } from '../fleet.js';
import type { RunOptions } from '../run.js';
import { newRunId, runOnFleet, withFleet } from '../run.js';
import type { StopSignal } from '../stop-signals.js';
import { deliverStop, onStopSignal, runListening } from '../stop-signals.js';
import { recoverUnderway } from './recover-slot.js';

/** The fleet and the RunOptions every run of the experiment shares (from the shared flags). */
export type SharedRunOptions = Omit<RunOptions, 'plan' | 'outDir' | 'experiment'>;

/** What `coordinator experiment` was asked to do. */
export interface ExperimentOptions {
  file: string;
  /** Where new experiment directories go. */
  outDir: string;
  /** Resume this directory; `true` means the newest directory of this experiment under outDir. */
  resume?: string | true;
  /** The cost flags: they set every arm's plan cost (the arms' own overrides first). */
  cost?: CostFlags;
  run: SharedRunOptions;
  /** Lines for the terminal (stdout). */
  print(line: string): void;
}

/** Runs (or resumes) an experiment; returns the process exit code. */
export async function runExperiment(o: ExperimentOptions): Promise<number> {
  const loaded = await loadExperimentFile(o.file); // every problem, before anything runs
  const record = experimentRecord(loaded, resolve(o.file));
  // A bad cost flag is refused before any fleet is gathered.
  for (const plan of Object.values(record.arm_plans)) withCostFlags(plan, o.cost ?? {});
  const { dir, manifest } = o.resume === undefined ? await createDir(o.outDir, record) : await resumeDir(o, record);
  const log = o.run.log;
  // A run under way when the coordinator stopped is recovered from its journal, not run again.
  if (o.resume !== undefined) await recoverUnderway(dir, manifest, o.run);
  const pending = manifest.runs.filter((e) => !isFinished(e));
  log(
    `experiment ${record.experiment.name}: ${manifest.runs.length - pending.length} of ${manifest.runs.length} runs already finished; directory ${dir}`,
  );
  const interrupt = new Interrupt(log);
  try {
    if (pending.length > 0)
      await withFleet(o.run, 'the experiment is over', async (fleet) => {
        for (const entry of pending) {
          if (interrupt.requested) break;
          const short = await runSlot(fleet, dir, manifest, entry, record, o, interrupt);
          if (short) {
            o.print(`experiment ${record.experiment.name}: stopped: ${short}`);
            break;
          }
        }
      });
  } finally {
    interrupt.dispose();
  }
  const unfinished = manifest.runs.filter((e) => !isFinished(e));
  if (unfinished.length > 0) {
    o.print(
      `experiment ${record.experiment.name}: ${unfinished.length} of ${manifest.runs.length} runs not finished; no analysis.json yet`,
    );
    o.print(`  continue with: coordinator experiment ${o.file} --resume ${dir}`);
    return ExitCode.ABORTED;
  }
  const { path, analysis } = await analyzeExperimentDir(dir);
  for (const line of analysisTable(analysis, record.experiment)) o.print(line);
  o.print(`  analysis: ${path}`);
  // The pictures are a view of analysis.json: failing to draw them must not fail the experiment.
  await writeExperimentReport(dir).then(
    (report) => o.print(`  report: ${report}`),
    (err: unknown) => o.print(`  report.html not written: ${formatError(err)}`),
  );
  return ExitCode.OK;
}

async function createDir(outDir: string, record: ExperimentRecord): Promise<{ dir: string; manifest: Manifest }> {
  const dir = join(outDir, newRunId(record.experiment.name));
  await mkdir(join(dir, 'runs'), { recursive: true });
  await writeRecord(dir, record);
  const manifest = newManifest(record);
  await writeManifest(dir, manifest);
  return { dir, manifest };
}

async function resumeDir(o: ExperimentOptions, record: ExperimentRecord): Promise<{ dir: string; manifest: Manifest }> {
  const newest = o.resume === true ? await newestDir(o.outDir, record.experiment.name) : o.resume!;
  // `--resume` alone on an attempt that died before creating its directory (a restarted
  // Kubernetes Job or systemd unit passes the same arguments every time): start it now.
  if (newest === null) {
    o.run.log(`--resume: no directory of experiment ${record.experiment.name} under ${o.outDir} yet: starting one`);
    return createDir(o.outDir, record);
  }
  const dir = newest;
  const { manifest } = await readExperimentDir(dir);
  if (manifest.experiment_sha256 !== record.sha256) {
    throw new LoadfleetError(
      ErrorCode.USAGE,
      `${dir} was started from a different experiment or plan (sha256 ${manifest.experiment_sha256.slice(0, 12)}…, now ${record.sha256.slice(0, 12)}…); resuming would mix two experiments, start a new one instead`,
      { exitCode: ExitCode.INVALID_INPUT },
    );
  }
  return { dir, manifest };
}

// Experiment directories are named <UTC stamp>-<name>-<hex>, so the newest sorts last; null: none yet.
async function newestDir(outDir: string, name: string): Promise<string | null> {
  const names = await readdir(outDir).catch(() => [] as string[]);
  const mine = names.filter((n) => new RegExp(`^\\d{8}T\\d{6}Z-${name.replace(/[.]/g, '\\.')}-[0-9a-f]{4}$`).test(n)).sort();
  return mine.length === 0 ? null : join(outDir, mine[mine.length - 1]!);
}

// Runs one arm × repeat; returns why the experiment cannot go on when the fleet lost too many
// agents (the slot stays unfinished, so --resume can run it with a whole fleet), else null.
async function runSlot(
  fleet: Fleet,
  dir: string,
  manifest: Manifest,
  entry: ManifestEntry,
  record: ExperimentRecord,
  o: ExperimentOptions,
  interrupt: Interrupt,
): Promise<string | null> {
  const arm = record.experiment.arms.find((a) => a.name === entry.arm)!;
  if (entry.status === 'aborted' || entry.status === 'running')
    entry.aborted_attempts.push({ run_dir: entry.run_dir, status_reason: entry.status_reason });
  const index = manifest.runs.indexOf(entry) + 1;
  Object.assign(entry, { status: 'running', run_dir: null, status_reason: null, started_at: new Date().toISOString(), finished_at: null });
  await writeManifest(dir, manifest);
  o.run.log(`run ${index}/${manifest.runs.length}: arm "${entry.arm}" repeat ${entry.repeat}`);
  interrupt.runStarted();
  try {
    const result = await runOnFleet(fleet, {
      ...o.run,
      plan: withCostFlags(record.arm_plans[arm.name]!, o.cost ?? {}),
      outDir: join(dir, 'runs'),
      experiment: { name: record.experiment.name, arm: arm.name, repeat: entry.repeat },
      ...(arm.expect_flow_control_engaged !== undefined && { expectFlowControlEngaged: arm.expect_flow_control_engaged }),
    });
    Object.assign(entry, { status: result.status, run_dir: relative(dir, result.dir), status_reason: statusReason(result.summaryLines) });
    o.run.log(`run ${index}/${manifest.runs.length}: arm "${entry.arm}" repeat ${entry.repeat} ${result.status} (${result.dir})`);
    return null;
  } catch (err) {
    Object.assign(entry, { status: 'aborted', status_reason: (err as Error).message });
    if (err instanceof LoadfleetError && err.code === ErrorCode.FLEET_SHORT) return err.message;
    // Stopped before the run began (the fleet stops waiting on a stop signal): the experiment ends as interrupted.
    if (err instanceof LoadfleetError && err.code === ErrorCode.ABORTED && interrupt.requested) return err.message;
    throw err;
  } finally {
    interrupt.runEnded();
    entry.finished_at = new Date().toISOString();
    await writeManifest(dir, manifest);
  }
}

// The run summary's first line is `run <id>: <status> (<reason>)`.
function statusReason(summaryLines: readonly string[]): string | null {
  return /^run \S+: \w+ \((.*)\)$/.exec(summaryLines[0] ?? '')?.[1] ?? null;
}

/**
 * A stop signal (SIGINT or SIGTERM) during an experiment stops the current run (which still writes
 * its directory, status aborted) and then the experiment. A run listens for it only from its
 * setting up on; a signal that arrives before (the run is being started) is handed on once the run
 * listens, so the run stops instead of running to its end.
 */
class Interrupt {
  requested = false;
  private signal: StopSignal = 'SIGINT';
  private inRun = false;
  private poll: NodeJS.Timeout | undefined;
  private readonly offStop: () => void;

  constructor(private readonly log: (line: string) => void) {
    this.offStop = onStopSignal((signal) => {
      if (!this.requested) this.log(`${signal}: stopping the current run, then the experiment (resume with --resume)`);
      this.requested = true;
      this.signal = signal;
      if (this.inRun && !runListening() && !this.poll) this.poll = setInterval(() => this.handOn(), 100);
    });
  }

  runStarted(): void {
    this.inRun = true;
  }

  runEnded(): void {
    this.inRun = false;
    this.stopPoll();
  }

  dispose(): void {
    this.stopPoll();
    this.offStop();
  }

  // The run listens now: it stops when it hears the signal.
  private handOn(): void {
    if (!runListening()) return;
    deliverStop(this.signal, 'run');
    this.stopPoll();
  }

  private stopPoll(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }
}
