// The readable form of the results: one aligned table, suite by suite, with the goal beside each
// figure that has one.
import type { TableRow } from './suite.js';

/** Renders every suite's rows as one plain-text table (ends with a newline). */
export function renderTable(suites: readonly [string, readonly TableRow[]][]): string {
  const rows = suites.flatMap(([suite, table]) => table.map((r) => [suite, r.figure, r.value, r.goal ?? ''] as const));
  const header = ['suite', 'figure', 'value', 'goal'] as const;
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return `\n${[line(header), rule, ...rows.map(line)].join('\n')}\n\n`;
}
