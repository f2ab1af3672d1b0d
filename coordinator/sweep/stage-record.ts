// One finished stage run, judged: its run.json (and, when every record was sent, its requests)
// read into the figures and verdict sweep.json holds. Shared by a stage the sweep ran and one a
// restarted sweep took up from its journal or found finished on disk.
import { join } from 'node:path';
import { stageCost } from '../../figures/cost/sweep-cost.js';
import { meanLength } from '../../shared/lengths.js';
import type { Plan } from '../../shared/plan.js';
import { readRunFile } from '../../shared/run-read.js';
import { readStageRequests } from './departures.js';
import { MEASURE_WINDOW } from './stage-plan.js';
import type { StageRecord, SweepState } from './sweep-json.js';
import { judgeStage, stageFigures } from './verdict.js';

/** `interruptedBy`: the stop signal's reason when the sweep was stopped during the stage (its verdict is then error). */
export async function judgeStageRun(
  runDir: string,
  state: SweepState,
  plan: Plan,
  index: number,
  value: number,
  measure: { start_s: number; end_s: number },
  interruptedBy: string | null,
): Promise<StageRecord> {
  const { sweep } = state;
  const scaled = plan.classes.find((c) => c.name === sweep.class)!;
  // A stage that failed before any load has its run.json too (no figures: judged as such below).
  const runJson = await readRunFile(runDir);
  // Sampled records hold a sample of the requests: departures and ranks over it would not be the
  // stage's, so run.json's own figures (every request's, merged by the agents) stand then.
  const sampled = runJson.status !== 'failed' && runJson.records?.sent === 'sampled';
  const read = sampled
    ? null
    : await readStageRequests(
        join(runDir, 'requests.ndjson'),
        sweep.class,
        Number(runJson.status === 'failed' ? Number.NaN : runJson.started_at_unix_ns),
        measure,
        state.slo.basis ?? 'sent',
      ).catch(() => null);
  const figures = stageFigures(
    runJson,
    sweep.class,
    MEASURE_WINDOW,
    measure,
    sweep.scale,
    value,
    meanLength(scaled.prompt.output_tokens) ?? Number.NaN,
    read?.departures ?? null,
    state.slo.basis,
    read?.latencies ?? null,
  );
  const judged = interruptedBy
    ? { verdict: 'error' as const, reasons: [`${interruptedBy} during the stage`] }
    : judgeStage(figures, state.slo);
  return {
    index,
    value,
    measurement: measurementAt(state.stages, value),
    ...figures,
    ...judged,
    reason: judged.reasons.join('; '),
    measure_window: measure,
    run_dir: runDir,
    cost: stageCost(runJson, sweep.class, MEASURE_WINDOW),
  };
}

/** 1 for a value's first stage, 2 for its first re-measure (a client-limited stage is measured again). */
export function measurementAt(stages: readonly StageRecord[], value: number): number {
  return stages.filter((s) => s.value === value).length + 1;
}
