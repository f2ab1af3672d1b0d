// The files that make an experiment directory self-describing: `experiment.json` (the validated
// experiment and every arm's plan as loaded) and `manifest.json` (one entry per arm × repeat with
// its run directory and status, rewritten atomically after every change so an interrupted
// experiment can be resumed). `coordinator analyze DIR` needs nothing else.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../shared/atomic-file.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import type { Experiment, LoadedExperiment } from '../shared/experiment.js';
import { stringifyExact } from '../shared/json.js';
import type { Plan } from '../shared/plan.js';

export const RECORD_FILE = 'experiment.json';
export const MANIFEST_FILE = 'manifest.json';
export const MANIFEST_SCHEMA = 'loadfleet.experiment-manifest/v1';

/** experiment.json: what was asked, with every plan resolved. */
export interface ExperimentRecord {
  experiment: Experiment;
  experiment_file: string;
  plan_file: string;
  plan: Plan;
  /** Per arm name, the plan it runs. */
  arm_plans: Record<string, Plan>;
  /** SHA-256 of experiment + arm plans: a resume refuses a directory whose experiment changed. */
  sha256: string;
}

/** A run's state: pending (not started), running (started, not finished: a crash), or its run.json status. */
export type SlotStatus = 'pending' | 'running' | 'completed' | 'degraded' | 'aborted';

/** One arm × repeat. */
export interface ManifestEntry {
  arm: string;
  repeat: number;
  status: SlotStatus;
  /** Relative to the experiment directory; null until the run has a directory. */
  run_dir: string | null;
  status_reason: string | null;
  started_at: string | null;
  finished_at: string | null;
  /** Earlier tries of this slot that aborted (their directories are kept). */
  aborted_attempts: { run_dir: string | null; status_reason: string | null }[];
  /** Set when a restarted coordinator recovered this run from its journal. */
  recovered?: { down_from: string; restarted_at: string; outage_s: number };
}

/** manifest.json. */
export interface Manifest {
  schema: typeof MANIFEST_SCHEMA;
  experiment: string;
  experiment_sha256: string;
  order: Experiment['order'];
  created_at: string;
  updated_at: string;
  runs: ManifestEntry[];
  definitions: Record<string, string>;
}

const MANIFEST_DEFINITIONS = {
  runs: 'one entry per arm × repeat in the order they run; completed and degraded runs are finished and a resume skips them',
  'runs[].status': 'pending (not started), running (started but not finished, e.g. the process died), or the run.json status',
  'runs[].aborted_attempts': 'earlier tries of this arm × repeat that aborted; a resume redoes them in a new run directory',
  'runs[].recovered':
    'present when the run was under way as its coordinator stopped and a resume recovered it from its journal in its own directory: down_from (the journal last write, ISO time), restarted_at and outage_s (between the two, s)',
};

/** Makes the record of a loaded experiment. */
export function experimentRecord(loaded: LoadedExperiment, experimentFile: string): ExperimentRecord {
  const armPlans = Object.fromEntries(loaded.experiment.arms.map((a, i) => [a.name, loaded.armPlans[i]!]));
  const sha256 = createHash('sha256')
    .update(stringifyExact({ experiment: loaded.experiment, arm_plans: armPlans }))
    .digest('hex');
  return {
    experiment: loaded.experiment,
    experiment_file: experimentFile,
    plan_file: loaded.planPath,
    plan: loaded.plan,
    arm_plans: armPlans,
    sha256,
  };
}

/** The arm × repeat slots in run order: interleaved (repeat 1: A, B; repeat 2: A, B …) or blocked (A 1, A 2 …, B 1 …). */
export function slots(e: Experiment): { arm: string; repeat: number }[] {
  const repeats = Array.from({ length: e.repeats }, (_, i) => i + 1);
  return e.order === 'blocked'
    ? e.arms.flatMap((a) => repeats.map((repeat) => ({ arm: a.name, repeat })))
    : repeats.flatMap((repeat) => e.arms.map((a) => ({ arm: a.name, repeat })));
}

/** A fresh manifest with every slot pending. */
export function newManifest(record: ExperimentRecord, now = new Date()): Manifest {
  return {
    schema: MANIFEST_SCHEMA,
    experiment: record.experiment.name,
    experiment_sha256: record.sha256,
    order: record.experiment.order,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    runs: slots(record.experiment).map((s) => ({
      ...s,
      status: 'pending',
      run_dir: null,
      status_reason: null,
      started_at: null,
      finished_at: null,
      aborted_attempts: [],
    })),
    definitions: MANIFEST_DEFINITIONS,
  };
}

/** Whether a slot's run counts (completed or degraded both produced a full run directory). */
export function isFinished(entry: ManifestEntry): boolean {
  return entry.status === 'completed' || entry.status === 'degraded';
}

export async function writeRecord(dir: string, record: ExperimentRecord): Promise<void> {
  await writeFileAtomic(join(dir, RECORD_FILE), `${stringifyExact(record, 2)}\n`);
}

export async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  manifest.updated_at = new Date().toISOString();
  await writeFileAtomic(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Reads experiment.json and manifest.json of an experiment directory. */
export async function readExperimentDir(dir: string): Promise<{ record: ExperimentRecord; manifest: Manifest }> {
  const read = async (name: string): Promise<unknown> => {
    try {
      return JSON.parse(await readFile(join(dir, name), 'utf8'));
    } catch (err) {
      throw new LoadfleetError(ErrorCode.USAGE, `${dir} is not an experiment directory: cannot read ${name} (${(err as Error).message})`, {
        exitCode: ExitCode.INVALID_INPUT,
      });
    }
  };
  return { record: (await read(RECORD_FILE)) as ExperimentRecord, manifest: (await read(MANIFEST_FILE)) as Manifest };
}
