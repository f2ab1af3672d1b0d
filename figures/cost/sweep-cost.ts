// The budget figures of sweep stages, read from each stage's run.json `cost` section over the
// measured window, and the Pareto front across the stages: each stage is one load, so the front
// shows what each step of load costs in interactivity and buys in throughput.
import type { Pareto, ParetoInput } from './pareto.js';
import { PARETO_DEFINITIONS, paretoOf } from './pareto.js';

/** stages[].cost of sweep.json. */
export interface StageCost {
  usd_per_hour: number | null;
  accelerators: { type: string; count: number } | null;
  output_tok_s: number | null;
  input_tok_s: number | null;
  output_tok_s_per_accelerator: number | null;
  input_tok_s_per_accelerator: number | null;
  output_tok_s_per_user: number | null;
  usd_per_million_output_tokens: number | null;
  usd_per_million_input_tokens: number | null;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * A stage's figures from its run.json: throughput and cost from every class together (the
 * hardware served them all), the per-user rate from the scaled class; null when the run.json has
 * no cost section (written before it existed).
 */
export function stageCost(run: Json, cls: string, window: string): StageCost | null {
  const section = obj(run.cost);
  const w = obj(obj(section.windows)[window]);
  if (Object.keys(w).length === 0) return null;
  const total = obj(w.total);
  const mine = obj(obj(w.classes)[cls]);
  const acc = obj(section.accelerators);
  return {
    usd_per_hour: num(section.usd_per_hour),
    accelerators: typeof acc.type === 'string' && num(acc.count) !== null ? { type: acc.type, count: acc.count as number } : null,
    output_tok_s: num(total.output_tok_s),
    input_tok_s: num(total.input_tok_s),
    output_tok_s_per_accelerator: num(total.output_tok_s_per_accelerator),
    input_tok_s_per_accelerator: num(total.input_tok_s_per_accelerator),
    output_tok_s_per_user: num(mine.output_tok_s_per_user),
    usd_per_million_output_tokens: num(total.usd_per_million_output_tokens),
    usd_per_million_input_tokens: num(total.usd_per_million_input_tokens),
  };
}

/** What the front reads of a stage. */
export interface StagePoint {
  index: number;
  value: number;
  measurement: number;
  verdict: string;
  cost?: StageCost | null;
}

/** The y axis every point can use: per accelerator when every point has it, else the deployment's rate. */
export function yAxis(
  points: readonly { perAccelerator: number | null; total: number | null }[],
): 'output_tok_s_per_accelerator' | 'output_tok_s' {
  return points.length > 0 && points.every((p) => p.perAccelerator !== null) ? 'output_tok_s_per_accelerator' : 'output_tok_s';
}

/** The Pareto front across a sweep's stages (`unit`: the stage value's unit, for labels). */
export function sweepPareto(stages: readonly StagePoint[], unit: string): Pareto {
  const measured = stages.filter((s) => s.verdict === 'pass' || s.verdict === 'fail');
  const y = yAxis(
    measured.map((s) => ({ perAccelerator: s.cost?.output_tok_s_per_accelerator ?? null, total: s.cost?.output_tok_s ?? null })),
  );
  const inputs: ParetoInput[] = stages.map((s) => ({
    label: `${s.value} ${unit}${s.measurement > 1 ? ` (#${s.measurement})` : ''}`,
    x: s.cost?.output_tok_s_per_user ?? null,
    y: (y === 'output_tok_s_per_accelerator' ? s.cost?.output_tok_s_per_accelerator : s.cost?.output_tok_s) ?? null,
    meets_slo: s.verdict === 'pass' ? true : s.verdict === 'fail' ? false : null,
    ...(s.verdict !== 'pass' && s.verdict !== 'fail' && { excluded: `verdict ${s.verdict}: the stage says nothing about the server` }),
  }));
  return paretoOf(inputs, { x: 'output_tok_s_per_user', y });
}

/** sweep.json definitions of the stage cost figures and the front. */
export const SWEEP_COST_DEFINITIONS: Record<string, string> = {
  'stages[].cost':
    "the stage's budget figures over the measured window from its run.json cost.windows.measure (null: a run.json without them): throughput and cost from every class together, since the hardware served them all, and output_tok_s_per_user from the scaled class",
  'stages[].cost.output_tok_s': 'completion tokens of the successful requests of every class in the measured window, per second of it',
  'stages[].cost.input_tok_s': 'prompt tokens of the same requests, per second of the measured window',
  'stages[].cost.output_tok_s_per_accelerator': 'output_tok_s / accelerators.count (null without a count)',
  'stages[].cost.input_tok_s_per_accelerator': 'input_tok_s / accelerators.count (null without a count)',
  'stages[].cost.output_tok_s_per_user':
    '1000 / the p50 TPOT in ms of the scaled class in the measured window (successful requests): the decode rate its median request saw',
  'stages[].cost.usd_per_million_output_tokens':
    'usd_per_hour / (output_tok_s × 3600) × 10⁶: the whole hour charged to output tokens (null without a price)',
  'stages[].cost.usd_per_million_input_tokens': 'usd_per_hour / (input_tok_s × 3600) × 10⁶: the whole hour charged to input tokens instead',
  'stages[].cost.usd_per_hour': 'the price of one hour of the deployment the stage ran with (plan cost or the cost flags)',
  ...PARETO_DEFINITIONS,
  'pareto.points[].meets_slo': 'true for a passing stage, false for a failing one; client-limited and error stages are not plotted',
};
