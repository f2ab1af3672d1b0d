// Pure: what `coordinator plan FILE --agents N` says of a plan without sending anything — its
// schedule hash (the one the real run writes), requests and prompt tokens per class and per
// agent, peak rates, peak streams at the assumed server speed, the headroom rule's verdict and
// fleet size, and how the run would calibrate its prompts. For a sweep, the same per stage.
import type { Plan } from '../../shared/plan.js';
import { variesPerRequest } from '../../shared/request-shape.js';
import { buildSchedule } from '../../shared/schedule.js';
import type { Sweep } from '../../shared/sweep.js';
import type { HeadroomOptions, HeadroomReport, LocalFleet } from '../headroom/index.js';
import { headroomReport } from '../headroom/index.js';
import type { AgentLoad } from '../headroom/load.js';
import { agentLoads } from '../headroom/load.js';
import type { FleetAgent } from '../headroom/rule.js';
import { buildStagePlan } from '../sweep/stage-plan.js';

/** One class of the plan. */
export interface ClassPlan {
  requests: number;
  /** Requests of the class per agent, agent order. */
  requests_per_agent: number[];
  prompt_tokens: number;
  /** Most request starts of the class in any one second, whole fleet. */
  peak_starts_per_s: number;
  /** Most streams of the class open at once at the assumed speed, whole fleet. */
  peak_streams: number;
  calibration: string;
}

/** The dry run of one plan on N agents. */
export interface PlanDryRun {
  plan: string;
  schedule_sha256: string;
  duration_s: number;
  agents: number;
  classes: Record<string, ClassPlan>;
  /** Per agent, its whole share (every class). */
  per_agent: Omit<AgentLoad, 'seconds'>[];
  prompt_tokens: number;
  /** Null when no self-test figures were at hand. */
  headroom: HeadroomReport | null;
}

/** Dry-runs `plan` (its workload files attached) on `fleet` (one entry per agent). */
export function dryRun(plan: Plan, fleet: readonly FleetAgent[], opts: HeadroomOptions, local?: LocalFleet): PlanDryRun {
  const schedule = buildSchedule(plan);
  const n = fleet.length;
  const classes: Record<string, ClassPlan> = {};
  plan.classes.forEach((cls, i) => {
    const perAgent = agentLoads(plan, schedule, n, opts.speed, i);
    const [whole] = agentLoads(plan, schedule, 1, opts.speed, i);
    classes[cls.name] = {
      requests: whole!.requests,
      requests_per_agent: perAgent.map((l) => l.requests),
      prompt_tokens: whole!.prompt_tokens,
      peak_starts_per_s: whole!.peak_starts_per_s,
      peak_streams: whole!.peak_streams,
      calibration: calibrationOf(plan, cls),
    };
  });
  const loads = agentLoads(plan, schedule, n, opts.speed);
  const withFigures = fleet.some((a) => a.figures !== null);
  return {
    plan: plan.name,
    schedule_sha256: schedule.sha256,
    duration_s: plan.duration_s,
    agents: n,
    classes,
    per_agent: loads.map(({ seconds: _, ...rest }) => rest),
    prompt_tokens: Object.values(classes).reduce((s, c) => s + c.prompt_tokens, 0),
    headroom: withFigures ? headroomReport(plan, schedule, fleet, opts, local) : null,
  };
}

/** How the run would size the class's prompts (coordinator/calibrate), without asking the target. */
export function calibrationOf(plan: Plan, cls: Plan['classes'][number]): string {
  if (variesPerRequest(cls) || cls.load.model === 'sessions')
    return 'none: each request is sized in words from its own length (distribution, dataset, trace or sessions)';
  const where = plan.target ? `${plan.target.base_url.replace(/\/+$/, '')}/tokenize` : "the embedded engine-sim's /tokenize";
  const file = plan.target?.tokenizer ? `, else the tokenizer file ${plan.target.tokenizer}` : '';
  return `count ${cls.prompt.input_tokens} prompt tokens on ${where}${file}, else words (unverified)`;
}

/**
 * The values a sweep would run if every stage passed: its listed stages, or its geometric
 * escalation up to its max (and max_value); bisect's two ends (the rest depends on their verdicts).
 */
export function sweepValues(sweep: Sweep): { values: number[]; note: string } {
  const cap = sweep.stop?.max_value ?? Number.POSITIVE_INFINITY;
  const s = sweep.strategy;
  if (s.type === 'stages') return { values: s.values.filter((v) => v <= cap), note: 'the listed stages' };
  if (s.type === 'bisect') return { values: [s.pass, s.fail], note: 'the two ends; the stages between depend on their verdicts' };
  const values: number[] = [];
  for (let v = s.start; v <= Math.min(s.max, cap) && values.length < 64; ) {
    values.push(v);
    const next = sweep.scale === 'concurrency' ? Math.max(v + 1, Math.round(v * s.factor)) : Math.round(v * s.factor * 1000) / 1000;
    v = next;
  }
  return { values, note: 'the escalation if every stage passes (a failing stage stops it earlier)' };
}

/** One stage of a sweep's dry run. */
export interface StageDryRun extends PlanDryRun {
  stage: number;
  value: number;
}

/** The plans of the stages a sweep would run (sweepValues), before their workload files are attached. */
export function sweepStagePlans(plan: Plan, sweep: Sweep): { note: string; stages: { value: number; plan: Plan }[] } {
  const { values, note } = sweepValues(sweep);
  // The drain cap only bounds how long a stage waits for its last replies: no part of the schedule.
  return {
    note,
    stages: values.map((value, i) => ({ value, plan: buildStagePlan(plan, sweep, value, i, plan.drain_timeout_s ?? 0).plan })),
  };
}
