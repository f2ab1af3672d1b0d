// suite: contract
// The product speaks of itself: README, docs, the changelog and code comments name capabilities and
// figures with their dates, never the tickets, work items or commits they came from (a reader has
// no access to those, and they go stale the day they are written).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SKIP = new Set(['node_modules', 'dist', '.git', 'fixtures', 'runs', 'experiments', 'sweeps', 'schemas']);

function files(dir: string, keep: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path, keep));
    else if (keep(name)) out.push(path);
  }
  return out;
}

const PROSE = [join(ROOT, 'README.md'), join(ROOT, 'CHANGELOG.md'), ...files(ROOT, (n) => n.endsWith('.md'))];
const CODE = ['agent', 'coordinator', 'results', 'figures', 'shared', 'sim', 'bench', 'scripts', 'deploy', 'test'].flatMap((d) =>
  files(join(ROOT, d), (n) => /\.(ts|mjs|cjs|sh)$/.test(n) || !n.includes('.')),
);

/** Ticket words: the word issue or item and a number (a GitHub reference such as "vLLM #22454" is a fact a reader can follow). */
const TICKET = /\b(issue|item)\s+\d+\b/i;
/** A commit hash: 7–40 hex digits with both a digit and a letter. */
const COMMIT = /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b/;

const offenders = (paths: readonly string[], pattern: RegExp): string[] =>
  [...new Set(paths)].flatMap((p) =>
    readFileSync(p, 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${relative(ROOT, p)}:${i + 1}: ${line.trim().slice(0, 120)}`] : [])),
  );

describe('the product speaks of itself', () => {
  it('no issue or item numbers in the docs or the code', () => {
    expect(offenders([...PROSE, ...CODE], TICKET)).toEqual([]);
  });

  it('no commit hashes in the docs (a date says which build)', () => {
    expect(offenders(PROSE, COMMIT)).toEqual([]);
  });
});
