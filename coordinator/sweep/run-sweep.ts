// `coordinator sweep FILE`, the I/O side: gather one fleet of agents (local or remote), then for
// each value the strategy picks run one stage on it (a normal run under <sweepdir>/stages/), judge
// it from its run.json, and rewrite sweep.json and report.html — so a sweep ended by a stop rule, a
// dead endpoint, a fleet that lost too many agents or Ctrl-C always leaves what it measured. The
// decisions are pure modules beside this one.

import { mkdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { SweepDoc } from '../../results/report/sweep-page.js';
import { sweepReportHtml } from '../../results/report/sweep-page.js';
import { writeFileAtomic } from '../../shared/atomic-file.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import { PLAN_DEFAULTS } from '../../shared/plan.js';
import { validatePlan } from '../../shared/plan-validate.js';
import type { SweepSlo } from '../../shared/sweep.js';
import type { LoadedSweep } from '../../shared/sweep-load.js';
import type { RunOptions } from '../run.js';
import { newRunId, runOnFleet, withFleet } from '../run.js';
import type { StopSignal } from '../stop-signals.js';
import { onStopSignal, stopReason } from '../stop-signals.js';
import { checkBudget } from './budget.js';
import { endpointProblem } from './endpoint.js';
import { stateOf, takeUpStages, thisCoordinator } from './resume-sweep.js';
import { buildStagePlan } from './stage-plan.js';
import { judgeStageRun, measurementAt } from './stage-record.js';
import type { Outcome } from './strategy.js';
import { fmt, nextStep, rulesOf, scaleUnit } from './strategy.js';
import type { StageRecord, SweepState } from './sweep-json.js';
import { writeSweepJson } from './sweep-json.js';
import type { StageFigures } from './verdict.js';

/** The fleet and how to run each stage: everything a run needs except the plan and where it goes. */
export type StageRunOptions = Omit<RunOptions, 'plan' | 'outDir'>;

/** What the CLI reports. */
export interface SweepResult {
  dir: string;
  doc: Record<string, unknown>;
}

/** Runs a validated sweep; writes `<outDir>/<sweep_id>/{sweep.json,report.html,stages/}`. */
export async function executeSweep(
  loaded: LoadedSweep,
  sweepFile: string,
  outDir: string,
  run: StageRunOptions,
  say: (line: string) => void,
  resumeDir: string | null = null,
): Promise<SweepResult> {
  const { sweep, plan } = loaded;
  const sweepId = resumeDir ? basename(resumeDir) : newRunId(sweep.name);
  const dir = resumeDir ?? join(outDir, sweepId);
  const stagesDir = join(dir, 'stages');
  await mkdir(stagesDir, { recursive: true });
  const scaled = plan.classes.find((c) => c.name === sweep.class)!;
  const state: SweepState = resumeDir
    ? await stateOf(resumeDir, loaded, run.agents)
    : {
        sweepId,
        sweep,
        sweepFile: resolve(sweepFile),
        planFile: loaded.planPath,
        background: plan.classes.filter((c) => c.name !== sweep.class).map((c) => c.name),
        slo: { ...pickSlo(scaled.slo), ...sweep.slo },
        agents: run.agents,
        startedAt: new Date(),
        finishedAt: null,
        stages: [],
        stop: null,
        coordinator: thisCoordinator(),
        resumed: [],
      };
  const rules = rulesOf(sweep.stop);
  const budgetS = sweep.stop?.time_budget_s ?? null;
  const overheads: number[] = [];
  let interrupted: StopSignal | null = null;
  // While a stage runs, its own listener stops that run; this one stops the sweep (and keeps the
  // process from exiting between stages, so sweep.json is still written).
  const offStop = onStopSignal((signal) => {
    interrupted ??= signal;
  });
  const save = async (): Promise<Record<string, unknown>> => {
    const doc = await writeSweepJson(dir, state);
    await writeFileAtomic(join(dir, 'report.html'), sweepReportHtml(doc as unknown as SweepDoc));
    return doc;
  };
  try {
    await save();
    if (resumeDir) await takeUpStages(dir, state, loaded, run, say, save);
    await withFleet(run, 'the sweep is over', async (fleet) => {
      for (;;) {
        if (interrupted) {
          state.stop = { rule: 'interrupted', reason: stopReason(interrupted) };
          break;
        }
        // A user's endpoint is probed before the strategy decides: one that died during the last stage
        // ends the sweep for that reason, not for the errors it caused.
        if (plan.target) {
          const dead = await endpointProblem(plan.target.base_url);
          if (dead) {
            state.stop = { rule: 'endpoint_failed', reason: dead };
            break;
          }
        }
        const outcomes: Outcome[] = state.stages.map((s) => ({
          value: s.value,
          verdict: s.verdict,
          errorShare: s.error_share,
          reason: s.reason,
        }));
        const step = nextStep(sweep.strategy, sweep.scale, rules, outcomes);
        if (step.kind === 'stop') {
          state.stop = { rule: step.rule, reason: step.reason };
          break;
        }
        const elapsedS = (Date.now() - state.startedAt.getTime()) / 1000;
        const budget = checkBudget(
          sweep.stage_duration_s,
          elapsedS,
          overheads,
          budgetS,
          plan.drain_timeout_s ?? PLAN_DEFAULTS.drain_timeout_s,
        );
        if (!budget.fits) {
          state.stop = { rule: 'time_budget', reason: budget.reason };
          break;
        }
        const index = state.stages.length;
        const stage = buildStagePlan(plan, sweep, step.value, index, budget.drainCapS);
        const checked = validatePlan(stage.plan);
        if (!checked.ok) throw new LoadfleetError(ErrorCode.INTERNAL, `stage ${index + 1} plan is invalid`, { details: checked.problems });
        const unit = scaleUnit(sweep.scale);
        const again = state.stages.at(-1)?.verdict === 'client_limited' && state.stages.at(-1)?.value === step.value;
        say(
          `stage ${index + 1}: ${sweep.class} at ${fmt(step.value)} ${unit} for ${sweep.stage_duration_s} s${again ? ' (measured again: the last was client-limited)' : ''}`,
        );
        const t0 = Date.now();
        let record: StageRecord;
        try {
          const result = await runOnFleet(fleet, { ...run, plan: checked.plan, outDir: stagesDir });
          record = await judgeStageRun(
            result.dir,
            state,
            plan,
            index,
            step.value,
            stage.measure,
            interrupted ? stopReason(interrupted) : null,
          );
        } catch (err) {
          if (err instanceof LoadfleetError && err.code === ErrorCode.FLEET_SHORT) {
            // Too many agents left between stages: end with what was measured, and say why.
            state.stop = { rule: 'fleet_short', reason: err.message };
            break;
          }
          // Stopped before the stage's run began (the fleet stops waiting on a stop signal).
          if (interrupted && err instanceof LoadfleetError && err.code === ErrorCode.ABORTED) {
            state.stop = { rule: 'interrupted', reason: err.message };
            break;
          }
          // The stage could not run at all (engine-sim did not start, …).
          const why = err instanceof Error ? err.message : String(err);
          record = {
            index,
            value: step.value,
            measurement: measurementAt(state.stages, step.value),
            ...emptyFigures(),
            verdict: 'error',
            reasons: [why],
            reason: why,
            measure_window: stage.measure,
            run_dir: null,
            cost: null,
          };
        }
        overheads.push((Date.now() - t0) / 1000 - sweep.stage_duration_s);
        state.stages.push(record);
        say(`stage ${index + 1}: ${fmt(step.value)} ${unit} → ${record.verdict} (${record.reason})`);
        await save();
      }
    });
  } finally {
    offStop();
  }
  state.finishedAt = new Date();
  return { dir, doc: await save() };
}

function pickSlo(slo: SweepSlo | undefined): SweepSlo {
  const out: SweepSlo = {};
  if (slo?.basis !== undefined) out.basis = slo.basis;
  if (slo?.ttft_p95_ms !== undefined) out.ttft_p95_ms = slo.ttft_p95_ms;
  if (slo?.tpot_p95_ms !== undefined) out.tpot_p95_ms = slo.tpot_p95_ms;
  if (slo?.success_rate_min !== undefined) out.success_rate_min = slo.success_rate_min;
  return out;
}

function emptyFigures(): StageFigures {
  return {
    run_status: 'not_run',
    run_status_reason: null,
    agents: 0,
    agent_health: [],
    run_wall_s: null,
    measure_s: 0,
    offered_rps: null,
    offered_concurrency: null,
    scheduled_rps: null,
    offered_tok_s: null,
    achieved_rps: null,
    achieved_tok_s: null,
    all_classes_rps: null,
    ttft_basis: 'sent',
    ttft_p50_ms: null,
    ttft_p95_ms: null,
    ttft_p99_ms: null,
    tpot_p50_ms: null,
    tpot_p95_ms: null,
    tpot_p99_ms: null,
    latency_on_failure: [],
    ttft_p95_successful_ms: null,
    tpot_p95_successful_ms: null,
    requests: 0,
    completed: 0,
    failed: 0,
    http_429: 0,
    success_rate: null,
    error_share: null,
    slo_attainment: null,
    goodput_rps: null,
    failures_by_status: {},
    server: null,
    client_limited: false,
    client_limited_agents: [],
    client_limited_reasons: [],
    data_quality_valid: null,
    slo_proof_valid: null,
    failed_checks: [],
  };
}

/** Exit status of a finished sweep: interrupted → 130-like ABORTED, otherwise OK. */
export function sweepExitCode(doc: Record<string, unknown>): number {
  return doc.status === 'interrupted' || doc.status === 'aborted' ? ExitCode.ABORTED : ExitCode.OK;
}
