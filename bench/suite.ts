// What a benchmark suite is: a name, and a run that returns its figures (for the JSON document)
// and a few rows for the human table.

/** What every suite is given. */
export interface BenchContext {
  /** Smoke mode: tiny loads, seconds instead of minutes; checks the harness, not the numbers. */
  quick: boolean;
  /** Progress lines (stderr). */
  log(line: string): void;
  /**
   * `--base-dist DIR`: a compiled tree of an earlier build (node_modules reachable from it) whose
   * agent the agent suites run beside this one's, so before and after meet the same machine.
   */
  baseDist?: string;
}

/** One row of the readable table. */
export interface TableRow {
  figure: string;
  value: string;
  goal?: string;
}

/** A suite's output. */
export interface SuiteResult {
  figures: Record<string, unknown>;
  table: TableRow[];
}

/** One benchmark suite. */
export interface Suite {
  name: string;
  run(ctx: BenchContext): Promise<SuiteResult>;
}

/** Formats a number for the table (null shows as "n/a"). */
export function fmt(x: number | null | undefined, digits = 0): string {
  if (x === null || x === undefined || Number.isNaN(x)) return 'n/a';
  return x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/**
 * Every suite states `goal_met`: its own when it judges one goal, all of its `goals_met` when it
 * judges several (false if any is missed, null if any could not be judged in this run, e.g. a
 * --quick load or too few free cores), and null with the reason when it has no goal.
 */
export function withGoalMet(figures: Record<string, unknown>): Record<string, unknown> {
  if ('goal_met' in figures) return figures;
  const many = figures.goals_met;
  if (many && typeof many === 'object') {
    const v = Object.values(many as Record<string, boolean | null>);
    const met = v.includes(false) ? false : v.includes(null) || v.length === 0 ? null : true;
    return { ...figures, goal_met: met };
  }
  return { ...figures, goal_met: null, goal: figures.goal ?? 'none set: this suite describes a capacity, it has no target' };
}
