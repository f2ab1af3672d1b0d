// The commands a person types must be safe wherever they are typed: outside a clone, `npx
// coordinator` or `npx agent` fetch unrelated registry packages with those names. loadfleet has one
// command, `loadfleet coordinator|agent|sim`: `./loadfleet` in a clone (a path, so nothing is ever
// fetched) and `loadfleet` where the package is installed from its tarball.
import { spawnSync } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
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

  it('the package tarball carries the compiled parts and the command, no tests', () => {
    const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
    const files: string[] = JSON.parse(packed.stdout)[0].files.map((f: { path: string }) => f.path);
    expect(files).toEqual(
      expect.arrayContaining(['deploy/bin/loadfleet', 'dist/agent/main.js', 'dist/coordinator/main.js', 'dist/sim/main.js']),
    );
    expect(files.filter((f) => f.includes('.test.'))).toEqual([]);
  });

  it('the documentation never tells anyone to npx a bare coordinator, agent or engine-sim', () => {
    for (const doc of ['README.md', 'docs/sweep.md', 'docs/experiments.md', 'docs/live.md', 'deploy/README.md', 'docs/verdicts.md']) {
      expect(readFileSync(join(ROOT, doc), 'utf8'), doc).not.toMatch(/npx (coordinator|agent|engine-sim)\b/);
    }
  });
});
