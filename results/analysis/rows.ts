// Pure: one run.json → one flat row of analysis.json `runs[]` (the seed's columns plus run_dir).
// Every figure is read from what the run wrote; a figure the run does not have (a class the arm did
// not run, no server scrape, validity keys from a version that did not write them) is null, and a
// missing validity flag is never taken as a pass.

import { costColumns } from '../../figures/cost/arm-cost.js';
import { CLASS_SERVER_FIGURE_SUFFIX, CLASS_WINDOW_FIGURES, SERVER_FIGURES } from '../../shared/analysis-figures.js';
import { isObj } from '../../shared/validate-kit.js';

/** One value of a row: figures are numbers, flags booleans, absent either is null. */
/** The column of a run row holding a class's verdict (met, missed, not_evaluable, or null). */
export function verdictColumn(cls: string): string {
  return `${cls}_slo_verdict`;
}

/** Whether a row column is a verdict rather than a figure (never summarised as {median, min, max}). */
export function isVerdictColumn(column: string): boolean {
  return column.endsWith('_slo_verdict');
}

export type RowValue = string | number | boolean | null;
/** A flat row of `runs[]`. */
export type Row = Record<string, RowValue>;

/** Where a run sits in its experiment. */
export interface RunTag {
  arm: string;
  repeat: number;
}

/** The columns every row has beside the figures, in the seed's order around them. */
export const ROW_HEAD = ['arm', 'repeat', 'data_quality_valid', 'slo_proof_valid', 'http_200', 'http_429'] as const;
export const ROW_TAIL = ['flow_control_materially_engaged', 'run_name', 'run_dir', 'agents'] as const;

/** The seed's run label. */
export function runName(tag: RunTag): string {
  return `${tag.arm} - repeat ${tag.repeat}`;
}

/** The row of one run, with a column for each of `classes` × (`windows` + all) even where the run has no such class. */
export function runRow(run: unknown, runDir: string, tag: RunTag, classes: readonly string[], windows: readonly string[]): Row {
  const r = isObj(run) ? run : {};
  const statusCounts = isObj(r['status_counts']) ? r['status_counts'] : {};
  const serverAll = at(r, ['server', 'windows', 'all']);
  const row: Row = {
    arm: tag.arm,
    repeat: tag.repeat,
    data_quality_valid: flag(at(r, ['data_quality', 'valid'])),
    slo_proof_valid: flag(at(r, ['slo_proof', 'valid'])),
    http_200: numberOr(statusCounts['200'], 0),
    http_429: numberOr(statusCounts['429'], 0),
  };
  const allWindows = [...windows.filter((w) => w !== 'all'), 'all'];
  for (const c of classes) {
    for (const w of allWindows) {
      const m = at(r, ['classes', c, 'windows', w]);
      for (const f of CLASS_WINDOW_FIGURES) row[`${c}_${w}_${f.suffix}`] = numberOr(isObj(m) ? m[f.source] : undefined, null);
    }
  }
  for (const c of classes) {
    const v = at(r, ['classes', c, 'slo_verdict', 'verdict']);
    if (typeof v === 'string') row[verdictColumn(c)] = v;
  }
  for (const c of classes) row[`${c}_${CLASS_SERVER_FIGURE_SUFFIX}`] = serverFigure(serverAll, `${c}_${CLASS_SERVER_FIGURE_SUFFIX}`);
  for (const f of SERVER_FIGURES) row[f] = serverFigure(serverAll, f);
  Object.assign(row, costColumns(r));
  row.flow_control_materially_engaged = flag(isObj(serverAll) ? serverAll['flow_control_materially_engaged'] : undefined);
  row.run_name = runName(tag);
  row.run_dir = runDir;
  // Which agents ran it (a fleet that lost one between runs runs the rest on fewer).
  const agents = Array.isArray(r['agents'])
    ? r['agents'].flatMap((a) => (isObj(a) && typeof a['agent_id'] === 'string' ? [a['agent_id']] : []))
    : [];
  row.agents = agents.length > 0 ? agents.join(',') : null;
  return row;
}

/** The classes and windows of a run's plan as run (run.json `plan`). */
export function planNames(run: unknown): { classes: string[]; windows: string[] } {
  const plan = at(isObj(run) ? run : {}, ['plan']);
  const names = (v: unknown): string[] =>
    Array.isArray(v) ? v.flatMap((x) => (isObj(x) && typeof x['name'] === 'string' ? [x['name']] : [])) : [];
  return { classes: names(isObj(plan) ? plan['classes'] : undefined), windows: names(isObj(plan) ? plan['windows'] : undefined) };
}

function at(o: Record<string, unknown>, path: readonly string[]): unknown {
  let v: unknown = o;
  for (const key of path) v = isObj(v) ? v[key] : undefined;
  return v;
}

function serverFigure(serverAll: unknown, key: string): number | null {
  return numberOr(isObj(serverAll) ? serverAll[key] : undefined, null);
}

function numberOr<T extends number | null>(v: unknown, fallback: T): number | T {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

// Only true is true; absent or null stays null (not evaluated), never a pass.
function flag(v: unknown): boolean | null {
  return typeof v === 'boolean' ? v : null;
}
