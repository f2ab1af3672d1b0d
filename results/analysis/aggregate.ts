// Pure: per-run rows → per-arm summaries and the arm comparison (domain.md §6). Each figure is
// summarised over the arm's runs as {median, min, max} of the per-run values; percentiles are
// never pooled across repeats (each run's p95 is its own, and only those are combined).
import { CLASS_WINDOW_FIGURES, isCountColumn } from '../../shared/analysis-figures.js';
import type { Compare } from '../../shared/experiment.js';
import { median, round3 } from '../../shared/stats.js';
import { armVerdicts } from './arm-slo.js';
import type { Row } from './rows.js';
import { isVerdictColumn, ROW_HEAD, ROW_TAIL } from './rows.js';

/** {median, min, max} of one figure over an arm's runs, rounded to 3 decimals; nulls if any run lacks it. */
export interface Spread3 {
  median: number | null;
  min: number | null;
  max: number | null;
}

/** The repeat-stability evidence of one arm. */
export interface RepeatSpread {
  metric: string;
  /** max / min over the arm's runs of the compared figure; null when not evaluable. */
  max_over_min: number | null;
  limit: number;
  /** Why max_over_min is null, when it is. */
  not_evaluated_reason: string | null;
}

/** by_arm.<arm>: counts, flags, one Spread3 per figure, then the stability gate. */
export type ArmSummary = Record<string, number | boolean | Spread3 | RepeatSpread>;

const NOT_FIGURES = new Set<string>([...ROW_HEAD, ...ROW_TAIL]);

/** The figure columns of the rows (every numeric column but identity, counts and flags), in first-seen order. */
export function figureColumnsOf(rows: readonly Row[]): string[] {
  const seen = new Set<string>();
  for (const row of rows)
    for (const key of Object.keys(row)) if (!NOT_FIGURES.has(key) && !isCountColumn(key) && !isVerdictColumn(key)) seen.add(key);
  return [...seen];
}

/** by_arm, in the order of `arms`; an arm with no rows is left out. */
export function byArm(rows: readonly Row[], arms: readonly string[], compare: Compare, spreadMax: number): Record<string, ArmSummary> {
  const figures = figureColumnsOf(rows);
  const out: Record<string, ArmSummary> = {};
  for (const arm of arms) {
    const mine = rows.filter((r) => r.arm === arm);
    if (mine.length > 0) out[arm] = armSummary(mine, figures, compare.metric, spreadMax);
  }
  return out;
}

function armSummary(rows: readonly Row[], figures: readonly string[], metric: string, spreadMax: number): ArmSummary {
  const s: ArmSummary = {
    runs: rows.length,
    all_data_quality_valid: rows.every((r) => r.data_quality_valid === true),
    all_slo_proof_valid: rows.every((r) => r.slo_proof_valid === true),
    http_200_total: sum(rows, 'http_200'),
    http_429_total: sum(rows, 'http_429'),
    flow_control_materially_engaged_runs: rows.filter((r) => r.flow_control_materially_engaged === true).length,
  };
  const verdicts = armVerdicts(rows);
  if (Object.keys(verdicts).length > 0) s.slo_verdict = verdicts as unknown as ArmSummary[string];
  for (const f of figures) s[f] = spread3(values(rows, f));
  const spread = repeatSpread(values(rows, metric), metric, spreadMax);
  s.repeat_spread = spread;
  s.stable = spread.max_over_min !== null && spread.max_over_min <= spreadMax;
  return s;
}

/** The per-run values of a column; null where any run lacks it (a median of fewer repeats would mislead). */
function values(rows: readonly Row[], column: string): number[] | null {
  const v = rows.map((r) => r[column]);
  return v.every((x): x is number => typeof x === 'number') ? v : null;
}

function sum(rows: readonly Row[], column: string): number {
  return rows.reduce((a, r) => a + (typeof r[column] === 'number' ? (r[column] as number) : 0), 0);
}

function spread3(v: number[] | null): Spread3 {
  if (!v || v.length === 0) return { median: null, min: null, max: null };
  return { median: round3(median(v)!), min: round3(Math.min(...v)), max: round3(Math.max(...v)) };
}

/** max/min of the compared figure over the repeats: stability needs two or more positive values. */
export function repeatSpread(v: number[] | null, metric: string, limit: number): RepeatSpread {
  const base = { metric, limit };
  if (!v) return { ...base, max_over_min: null, not_evaluated_reason: 'a run of this arm has no value for the figure' };
  if (v.length < 2) return { ...base, max_over_min: null, not_evaluated_reason: 'stability needs at least 2 repeats' };
  const min = Math.min(...v);
  if (min <= 0) return { ...base, max_over_min: null, not_evaluated_reason: 'the smallest value is not positive, so max/min is undefined' };
  return { ...base, max_over_min: round3(Math.max(...v) / min), not_evaluated_reason: null };
}

/** The comparison's key stem and unit for a compared column (see comparisonKeys). */
export interface ComparisonKeys {
  difference: string;
  factor: string;
}

/**
 * Key names of the comparison, reproducing the seed: `realtime_surge_p95_ttft_ms` →
 * `realtime_p95_ttft_increase_ms` and `realtime_p95_ttft_factor`. Rule: drop the unit suffix
 * (`_ms`, `_pct`), drop the window from a per-class-and-window column (the compared window is in
 * `comparison.metric`), then append `_increase` + the unit and `_factor`. The difference is
 * treatment − baseline, so a negative "increase" is a decrease.
 */
export function comparisonKeys(metric: string, classes: readonly string[], windows: readonly string[]): ComparisonKeys {
  const unit = /_(ms|pct)$/.exec(metric)?.[0] ?? '';
  let stem = metric.slice(0, metric.length - unit.length);
  for (const c of classes) {
    for (const w of [...windows, 'all']) {
      const prefix = `${c}_${w}_`;
      const isClassWindow = CLASS_WINDOW_FIGURES.some((f) => metric === `${prefix}${f.suffix}`);
      if (isClassWindow) stem = `${c}_${stem.slice(prefix.length)}`;
    }
  }
  return { difference: `${stem}_increase${unit}`, factor: `${stem}_factor` };
}

/** `comparison`: treatment − baseline and treatment / baseline of the arm medians as reported. */
export function comparison(
  arms: Record<string, ArmSummary>,
  compare: Compare,
  keys: ComparisonKeys,
): Record<string, number | string | null> {
  const b = (arms[compare.baseline]?.[compare.metric] as Spread3 | undefined)?.median ?? null;
  const t = (arms[compare.treatment]?.[compare.metric] as Spread3 | undefined)?.median ?? null;
  return {
    [keys.difference]: b === null || t === null ? null : round3(t - b),
    [keys.factor]: b === null || t === null || b === 0 ? null : round3(t / b),
    metric: compare.metric,
    baseline: compare.baseline,
    treatment: compare.treatment,
    baseline_median: b,
    treatment_median: t,
  };
}
