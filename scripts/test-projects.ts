// Which vitest project a test file belongs to, by rule, so a new file lands in one without an
// edit to vitest.config.ts. A file beside the code is a unit test. A file in test/ runs the real
// processes, in parallel with other such files, unless its header says otherwise with a line
// `// suite: contract` (pure checks with no long-running process: part of `npm test`),
// `// suite: timing` (its assertions are on times, rates or clocks that a busy machine would move:
// after the e2e files, beside at most one other timing file) or `// suite: alone` (it keeps both
// cores busy itself, or measures with the whole machine: nothing runs beside it).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export type TestProject = 'unit' | 'e2e' | 'timing' | 'alone';

/** The marker line; only the file's leading comment lines are read, so a test that prints one is not moved. */
const MARKER = /^\/\/ suite: (contract|timing|alone)\s*$/;

/** The project of the test file at `path` (relative to the repository, `/`-separated) with contents `text`. */
export function projectOf(path: string, text: string): TestProject {
  if (!path.startsWith('test/')) return 'unit';
  for (const line of text.split('\n')) {
    if (!line.startsWith('//')) break;
    const m = MARKER.exec(line);
    if (m) return m[1] === 'contract' ? 'unit' : (m[1] as 'timing' | 'alone');
  }
  return 'e2e';
}

/** Folders that hold no test of the project's own. */
const NOT_SOURCE = new Set(['node_modules', 'dist', 'runs', 'experiments', 'sweeps']);

/** Every `*.test.ts` under `dir`, relative to `root` and `/`-separated. */
function testFiles(root: string, dir = root): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (NOT_SOURCE.has(entry.name) || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(root, path));
    else if (entry.name.endsWith('.test.ts')) out.push(relative(root, path).split(sep).join('/'));
  }
  return out.sort();
}

/** The repository's test files by project: what vitest.config.ts includes in each. */
export function testFilesByProject(root: string): Record<TestProject, string[]> {
  const by: Record<TestProject, string[]> = { unit: [], e2e: [], timing: [], alone: [] };
  for (const f of testFiles(root)) by[f.startsWith('test/') ? projectOf(f, readFileSync(join(root, f), 'utf8')) : 'unit'].push(f);
  return by;
}
