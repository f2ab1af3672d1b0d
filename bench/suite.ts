// What a benchmark suite is: a name, and a run that returns its figures (for the JSON document)
// and a few rows for the human table.

/** What every suite is given. */
export interface BenchContext {
  /** Smoke mode: tiny loads, seconds instead of minutes; checks the harness, not the numbers. */
  quick: boolean;
  /** Progress lines (stderr). */
  log(line: string): void;
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
