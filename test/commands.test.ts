// The commands a person types must be safe wherever they are typed: outside a clone, `npx
// coordinator` or `npx agent` fetch unrelated registry packages with those names. loadfleet has one
// command, `loadfleet coordinator|agent|sim`: `./loadfleet` in a clone (a path, so nothing is ever
// fetched) and `loadfleet` where the package is installed from its tarball.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

function run(entry: string, args: string[]) {
  const env = { ...process.env };
  delete env.LOADFLEET_HOME;
  return spawnSync(entry, args, { encoding: 'utf8', env });
}

describe('the loadfleet command', () => {
  it('is the package only bin: no generic names that could shadow, or be mistaken for, other packages', () => {
    expect(pkg.bin).toEqual({ loadfleet: 'deploy/bin/loadfleet' });
  });

  it('runs each part from the clone (./loadfleet) and through a symlink elsewhere (an installed bin)', () => {
    const link = join(tempDir(), 'loadfleet');
    symlinkSync(join(ROOT, 'loadfleet'), link);
    for (const entry of [join(ROOT, 'loadfleet'), link]) {
      expect(run(entry, ['coordinator', '--help']).stdout).toMatch(/^Usage: coordinator/);
      expect(run(entry, ['agent', '--help']).stdout).toMatch(/^Usage: agent/);
      expect(run(entry, ['sim', '--help']).stdout).toMatch(/^Usage: engine-sim/);
    }
    expect(run(link, ['bogus']).status).toBe(2);
  });

  it('every part answers --version with the package version, and its --help shows examples', () => {
    const entry = join(ROOT, 'loadfleet');
    expect(run(entry, ['--version']).stdout.trim()).toBe(pkg.version);
    expect(run(entry, ['--help']).stdout).toContain('loadfleet doctor http://localhost:8000/v1');
    const parts = [['coordinator'], ['coordinator', 'start'], ['coordinator', 'sweep'], ['agent'], ['sim'], ['doctor'], ['init']];
    for (const part of parts) {
      expect(run(entry, [...part, '--version']).stdout.trim(), part.join(' ')).toBe(pkg.version);
      const help = run(entry, [...part, '--help']);
      expect(help.status, part.join(' ')).toBe(0);
      expect(help.stdout, part.join(' ')).toMatch(/\nExamples:\n {2}(LOADFLEET_TOKEN=\S+ )?\.\/loadfleet /);
    }
  });

  it('the package tarball carries the compiled parts and the command, no tests', () => {
    const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
    const files: string[] = JSON.parse(packed.stdout)[0].files.map((f: { path: string }) => f.path);
    expect(files).toEqual(
      expect.arrayContaining(['deploy/bin/loadfleet', 'dist/agent/main.js', 'dist/coordinator/main.js', 'dist/sim/main.js']),
    );
    expect(files.filter((f) => f.includes('.test.'))).toEqual([]);
  });

  it("a user's npm ci carries no test-only heavyweight: node-llama-cpp is pinned in test/llama with its own lock", () => {
    const all = { ...pkg.dependencies, ...pkg.devDependencies, ...pkg.optionalDependencies };
    expect(Object.keys(all)).not.toContain('node-llama-cpp');
    expect(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')).not.toContain('node_modules/node-llama-cpp');
    const llama = JSON.parse(readFileSync(join(ROOT, 'test/llama/package.json'), 'utf8'));
    expect(llama.dependencies['node-llama-cpp']).toMatch(/^\d+\.\d+\.\d+$/);
    const lock = JSON.parse(readFileSync(join(ROOT, 'test/llama/package-lock.json'), 'utf8'));
    expect(lock.packages['node_modules/node-llama-cpp'].version).toBe(llama.dependencies['node-llama-cpp']);
    expect(pkg.scripts['test:deps']).toBe('npm ci --prefix test/llama --no-audit --no-fund && npm run test:otel-py-deps');
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(/npm ci --no-audit --no-fund\n(#.*\n)*npm run test:deps\n/);
  });

  it('the documentation never tells anyone to npx a bare coordinator, agent or engine-sim', () => {
    const docs = readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`);
    for (const doc of ['README.md', ...docs, 'deploy/README.md']) {
      expect(readFileSync(join(ROOT, doc), 'utf8'), doc).not.toMatch(/npx (coordinator|agent|engine-sim)\b/);
    }
  });
});
