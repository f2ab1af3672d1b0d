// The per-file time table printed at the end of a test run, slowest first: where the suite's
// minutes go, and which single tests break its two-minute bound.

export interface FileTime {
  project: string;
  file: string;
  /** Wall time of the file in its worker, ms. */
  ms: number;
  tests: number;
  failed: boolean;
  /** Its slowest test. */
  slowest?: { name: string; ms: number };
  /** Its failed tests (or the file's own error, when it failed outside a test) and each one's first error line. */
  failures?: { name: string; error: string }[];
  /** When it started and ended (ms since the epoch), for each project's wall time. */
  startedMs?: number;
  endedMs?: number;
}

/** No single test may take longer: over it, a test is named at the end of the table. */
export const TEST_BOUND_MS = 120_000;

const secs = (ms: number): string => (ms / 1000).toFixed(1).padStart(7);

/**
 * The table's lines: one per file, slowest first; then per project the files' times summed and,
 * where known, the wall time from its first file's start to its last one's end (files running two
 * at a time sum to more than their wall time); then the tests over the bound; last, every failed
 * test with its first error line, so the end of a long log (all a CI page may keep) says what failed.
 */
export function fileTimesTable(files: readonly FileTime[], wallMs: number): string[] {
  const sorted = [...files].sort((a, b) => b.ms - a.ms);
  const width = Math.max(4, ...sorted.map((f) => f.project.length));
  const lines = [`per-file times, slowest first (s; ${sorted.length} files, ${(wallMs / 1000).toFixed(1)} s wall):`];
  for (const f of sorted) {
    const slow = f.slowest && f.tests > 1 ? `  (slowest test ${(f.slowest.ms / 1000).toFixed(1)} s)` : '';
    lines.push(`${secs(f.ms)}  ${f.project.padEnd(width)}  ${f.file}${f.failed ? '  FAILED' : ''}${slow}`);
  }
  const byProject = new Map<string, { ms: number; from: number; to: number }>();
  for (const f of sorted) {
    const p = byProject.get(f.project) ?? { ms: 0, from: Infinity, to: -Infinity };
    p.ms += f.ms;
    if (f.startedMs !== undefined && f.endedMs !== undefined) {
      p.from = Math.min(p.from, f.startedMs);
      p.to = Math.max(p.to, f.endedMs);
    }
    byProject.set(f.project, p);
  }
  const projectLine = ([name, p]: [string, { ms: number; from: number; to: number }]): string =>
    `${name} ${(p.ms / 1000).toFixed(1)} s${p.to >= p.from ? ` in ${((p.to - p.from) / 1000).toFixed(1)} s wall` : ''}`;
  lines.push(
    `per project, files summed: ${[...byProject]
      .sort((a, b) => b[1].ms - a[1].ms)
      .map(projectLine)
      .join('; ')}`,
  );
  const over = sorted.filter((f) => f.slowest && f.slowest.ms > TEST_BOUND_MS);
  for (const f of over)
    lines.push(`over ${TEST_BOUND_MS / 1000} s: ${f.file} > ${f.slowest!.name} (${(f.slowest!.ms / 1000).toFixed(1)} s)`);
  const failed = sorted.filter((f) => f.failed);
  if (failed.length > 0) lines.push(`failed: ${failed.length} file${failed.length === 1 ? '' : 's'}`);
  for (const f of failed) {
    const failures = f.failures?.length ? f.failures : [{ name: '(the file)', error: 'failed' }];
    for (const x of failures) lines.push(`FAILED ${f.project} ${f.file} > ${x.name}: ${x.error}`);
  }
  return lines;
}
