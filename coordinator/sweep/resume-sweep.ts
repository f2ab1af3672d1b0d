// A sweep whose coordinator stopped (killed, crashed) taken up by the same `coordinator sweep`
// command restarted on the same --out. Its progress is on disk: sweep.json holds every stage judged
// so far (rewritten after each), and stages/ the run directories. A stage directory sweep.json does
// not hold yet was under way: with its journal it is recovered (the agents that outlived the
// coordinator rejoin within their grace), with its run.json it had finished and is judged, with
// neither it is run again. The strategy is a pure function of the judged stages (strategy.ts), so
// the value of the stage under way is the one it picks from the stages before it.
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { PLAN_DEFAULTS } from '../../shared/plan.js';
import type { SweepResultJson } from '../../shared/result-schemas.js';
import { readSweepJson } from '../../shared/run-read.js';
import type { LoadedSweep } from '../../shared/sweep-load.js';
import { journalPath } from '../journal/run-journal.js';
import { writerAlive } from '../process-alive.js';
import { resumeRun } from '../recover.js';
import type { RunOptions } from '../run/options.js';
import { buildStagePlan } from './stage-plan.js';
import { judgeStageRun } from './stage-record.js';
import type { Outcome } from './strategy.js';
import { nextStep, rulesOf } from './strategy.js';
import type { ResumedStage, StageRecord, SweepState } from './sweep-json.js';

/** This process, as sweep.json names the coordinator running the sweep. */
export function thisCoordinator(): { host: string; pid: number } {
  return { host: hostname(), pid: process.pid };
}

// Whether the coordinator sweep.json names still runs: on this host read from /proc (a zombie, this
// very process — PID 1 in a restarted container — or a process started after sweep.json was last
// written is not it); another host's cannot be told from one running.
function alive(c: { host: string; pid: number } | undefined, writtenAtMs: number): boolean {
  if (!c || c.host !== hostname()) return c !== undefined;
  return writerAlive(c.pid, writtenAtMs);
}

/**
 * The newest sweep directory under `outDir` of this same sweep (same file, same definition) that
 * is still `running` in its sweep.json while its coordinator on this host is gone; null if none.
 */
export async function unfinishedSweep(outDir: string, loaded: LoadedSweep, sweepFile: string): Promise<string | null> {
  if (!existsSync(outDir)) return null;
  const dirs = (await readdir(outDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => join(outDir, d.name));
  for (const dir of dirs.sort().reverse()) {
    const doc = await readDoc(dir);
    if (doc?.status !== 'running' || doc.sweep_file !== resolve(sweepFile)) continue;
    if (JSON.stringify(doc.sweep) !== JSON.stringify(loaded.sweep) || alive(doc.coordinator, (await stat(join(dir, 'sweep.json'))).mtimeMs))
      continue;
    return dir;
  }
  return null;
}

// sweep.json as written, checked against its published shape; a missing or broken one is no sweep to take up.
async function readDoc(dir: string): Promise<SweepResultJson | null> {
  try {
    return await readSweepJson(dir);
  } catch {
    return null;
  }
}

/** The sweep's state as its sweep.json left it, now run by this process. */
export async function stateOf(dir: string, loaded: LoadedSweep, agents: number): Promise<SweepState> {
  const doc = (await readDoc(dir))!;
  return {
    sweepId: doc.sweep_id,
    sweep: loaded.sweep,
    sweepFile: doc.sweep_file,
    planFile: doc.plan_file,
    background: doc.background_classes,
    slo: doc.slo,
    agents,
    startedAt: new Date(doc.started_at),
    finishedAt: null,
    // The published stage is the part every reader relies on; this process wrote the whole record.
    stages: doc.stages as StageRecord[],
    stop: null,
    coordinator: thisCoordinator(),
    resumed: doc.resumed ?? [],
  };
}

/**
 * Takes up the stage runs sweep.json does not hold yet, in the order run: each recovered or judged
 * one is appended to `state.stages`. Runs before the sweep gathers its fleet (the recovery listens
 * where the stage's agents were told to connect).
 */
export async function takeUpStages(
  dir: string,
  state: SweepState,
  loaded: LoadedSweep,
  run: Omit<RunOptions, 'plan' | 'outDir'>,
  say: (line: string) => void,
  save: () => Promise<unknown>,
): Promise<void> {
  const stagesDir = join(dir, 'stages');
  const held = new Set([...state.stages.map((s) => s.run_dir), ...state.resumed.map((r) => r.run_dir)]);
  const names = existsSync(stagesDir) ? (await readdir(stagesDir)).sort() : [];
  for (const runDir of names.map((n) => join(stagesDir, n)).filter((d) => !held.has(d))) {
    const index = state.stages.length;
    const outcomes: Outcome[] = state.stages.map((s) => ({
      value: s.value,
      verdict: s.verdict,
      errorShare: s.error_share,
      reason: s.reason,
    }));
    const step = nextStep(state.sweep.strategy, state.sweep.scale, rulesOf(state.sweep.stop), outcomes);
    if (step.kind !== 'run') return;
    const drain = loaded.plan.drain_timeout_s ?? PLAN_DEFAULTS.drain_timeout_s;
    const { measure } = buildStagePlan(loaded.plan, state.sweep, step.value, index, drain);
    const restarted = new Date();
    const journal = journalPath(runDir);
    const entry = (how: ResumedStage['how'], downFrom: Date | null): ResumedStage => ({
      stage_index: index,
      run_dir: runDir,
      how,
      down_from: downFrom?.toISOString() ?? null,
      restarted_at: restarted.toISOString(),
      outage_s: downFrom ? (restarted.getTime() - downFrom.getTime()) / 1000 : null,
    });
    if (existsSync(journal)) {
      const down = (await stat(journal)).mtime;
      say(`stage ${index + 1} was under way when the coordinator stopped: recovering ${runDir} from its journal`);
      const result = await resumeRun(runDir, { ...run, plan: undefined as never, outDir: runDir });
      state.stages.push(await judgeStageRun(result.dir, state, loaded.plan, index, step.value, measure, null));
      state.resumed.push(entry('recovered', down));
    } else if (existsSync(join(runDir, 'run.json'))) {
      say(`stage ${index + 1} had finished when the coordinator stopped: judged from ${runDir}`);
      state.stages.push(await judgeStageRun(runDir, state, loaded.plan, index, step.value, measure, null));
      state.resumed.push(entry('found_complete', null));
    } else {
      say(`stage ${index + 1} (${runDir}) has no journal and no run.json: it is run again`);
      state.resumed.push(entry('rerun', null));
      await save();
      return;
    }
    const last = state.stages.at(-1)!;
    say(`stage ${index + 1}: ${last.value} → ${last.verdict} (${last.reason})`);
    await save();
  }
}
