// The budget figures of an experiment: per run, columns of analysis.json runs[] read from run.json
// cost.windows.all.total (so by_arm summarises them as {median, min, max} like every figure), and
// the Pareto front across the arms at their medians — each arm one configuration of the target.
import { COST_FIGURES } from '../../shared/analysis-figures.js';
import type { Pareto, ParetoInput } from './pareto.js';
import { PARETO_DEFINITIONS, paretoOf } from './pareto.js';
import { yAxis } from './sweep-cost.js';

/** The runs[] columns, each copying the run.json cost.windows.all.total figure of its name. */
export const COST_COLUMNS = COST_FIGURES;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});

/** The cost columns of one run (null where the run.json lacks the figure). */
export function costColumns(run: unknown): Record<string, number | null> {
  const total = obj(obj(obj(obj(obj(run).cost).windows).all).total);
  const out: Record<string, number | null> = {};
  for (const k of COST_COLUMNS) out[k] = typeof total[k] === 'number' && Number.isFinite(total[k]) ? (total[k] as number) : null;
  return out;
}

/** What the front reads of by_arm.<arm>. */
type ArmFigures = Record<string, unknown>;

const medianOf = (arm: ArmFigures, column: string): number | null => {
  const m = obj(arm[column]).median;
  return typeof m === 'number' ? m : null;
};

// An arm met the SLO when every class that declares one met it in every run (by_arm.<arm>.slo_verdict).
function armMeetsSlo(arm: ArmFigures): boolean | null {
  const verdicts = Object.values(obj(arm.slo_verdict)).map((v) => obj(v).verdict);
  if (verdicts.length === 0) return null;
  return verdicts.every((v) => v === 'met');
}

/** The Pareto front across the arms, at each arm's median over its runs. */
export function armPareto(byArm: Record<string, ArmFigures>): Pareto {
  const arms = Object.entries(byArm);
  const y = yAxis(
    arms.map(([, a]) => ({ perAccelerator: medianOf(a, 'output_tok_s_per_accelerator'), total: medianOf(a, 'output_tok_s') })),
  );
  const inputs: ParetoInput[] = arms.map(([name, a]) => ({
    label: name,
    x: medianOf(a, 'output_tok_s_per_user'),
    y: medianOf(a, y),
    meets_slo: armMeetsSlo(a),
  }));
  return paretoOf(inputs, { x: 'output_tok_s_per_user', y });
}

/** What one run's value of each cost column is, for the report's charts. */
export const COST_COLUMN_MEANINGS: Record<string, string> = {
  output_tok_s: 'output tokens of the successful requests of every class per second of the run',
  input_tok_s: 'input tokens of the successful requests of every class per second of the run',
  output_tok_s_per_accelerator: 'output tokens per second per accelerator over the run',
  input_tok_s_per_accelerator: 'input tokens per second per accelerator over the run',
  output_tok_s_per_user: 'the decode rate the median request saw (1000 / p50 TPOT), tokens per second',
  usd_per_million_output_tokens: 'US dollars per million output tokens: the hour’s price over the output tokens the hour produced',
  usd_per_million_input_tokens: 'US dollars per million input tokens: the hour’s price over the input tokens the hour took in',
};

/** analysis.json definitions of the cost columns and the front. */
export const ARM_COST_DEFINITIONS: Record<string, string> = {
  'runs[].output_tok_s':
    'run.json cost.windows.all.total.output_tok_s: completion tokens of the successful requests of every class / the run length in seconds',
  'runs[].input_tok_s': 'run.json cost.windows.all.total.input_tok_s: their prompt tokens / the run length in seconds',
  'runs[].output_tok_s_per_accelerator': 'output_tok_s / the accelerator count of the run (null without one)',
  'runs[].input_tok_s_per_accelerator': 'input_tok_s / the accelerator count of the run (null without one)',
  'runs[].output_tok_s_per_user':
    "1000 / the p50 TPOT in ms over every class's successful requests of the run: the decode rate the median request saw",
  'runs[].usd_per_million_output_tokens':
    "the run's $/hour / (output_tok_s × 3600) × 10⁶: the whole hour charged to output tokens (null without a price)",
  'runs[].usd_per_million_input_tokens': "the run's $/hour / (input_tok_s × 3600) × 10⁶: the whole hour charged to input tokens instead",
  ...PARETO_DEFINITIONS,
  'pareto.points[]':
    "one point per arm at the medians over its runs (by_arm.<arm>.output_tok_s_per_user and the y figure); meets_slo is true when every class's by_arm slo_verdict is met, false when any is not, null without an SLO",
};
