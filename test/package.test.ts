// The installed package, as a client machine gets it: `npm pack` of this clone, installed from the
// tarball into an empty prefix without dev dependencies, then its `loadfleet` command: --version,
// engine-sim and doctor, an agent joining a coordinator run from the clone, and the main job
// (`coordinator start` on the built-in plan) from an empty directory.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { constantRatePlan, listeningCoordinator, loadfleet, onlyRunDir, readRunJson, tempDir, waitFor, writePlan } from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('the package installed from its tarball', () => {
  let bin: string;
  let prefix: string;
  // The installed command must find everything in its own install, never in this clone.
  const env = { LOADFLEET_HOME: '' };
  const installed = (args: readonly string[], cwd?: string) => loadfleet(args, env, cwd ?? tempDir(), bin);

  beforeAll(() => {
    const work = tempDir('loadfleet-pack-');
    // dist/ is built by `npm test` (or the test run's `npm run build`); --ignore-scripts keeps pack from compiling again.
    const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8' });
    expect(pack.status, pack.stderr).toBe(0);
    const info = JSON.parse(pack.stdout)[0] as {
      filename: string;
      size: number;
      unpackedSize: number;
      entryCount: number;
      files: { path: string }[];
    };
    prefix = join(work, 'prefix');
    const t0 = Date.now();
    // --prefer-offline: the dependencies come from npm's cache where it has them (CI's `npm ci` filled it).
    const install = spawnSync(
      'npm',
      ['install', '--prefix', prefix, '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', join(work, info.filename)],
      { encoding: 'utf8' },
    );
    expect(install.status, install.stderr).toBe(0);
    bin = join(prefix, 'node_modules', '.bin', 'loadfleet');
    const du = spawnSync('du', ['-sk', join(prefix, 'node_modules')], { encoding: 'utf8' }).stdout.split('\t')[0];
    console.log(
      `package: ${info.filename} ${(info.size / 1024).toFixed(0)} KiB packed, ${(info.unpackedSize / 1024).toFixed(0)} KiB unpacked, ${info.entryCount} files; installed without dev dependencies in ${((Date.now() - t0) / 1000).toFixed(1)} s, node_modules ${(Number(du) / 1024).toFixed(1)} MiB`,
    );
    expect(info.files.filter((f) => /\.test\.|^dist\/(test|bench)\//.test(f.path))).toEqual([]);
  }, 180_000);

  it('has its command and no dev dependency (no node-llama-cpp, no TypeScript)', async () => {
    expect(existsSync(bin)).toBe(true);
    const mods = readdirSync(join(prefix, 'node_modules'));
    for (const dev of ['node-llama-cpp', 'typescript', 'vitest', '@biomejs', 'playwright-core']) expect(mods).not.toContain(dev);
    const v = await installed(['--version']);
    expect(v.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  });

  it('runs engine-sim and `doctor` against it', async () => {
    // The installed engine-sim, not the clone's.
    const child = spawn(bin, ['sim', '--port', '0', '--ttft-ms', '5', '--itl-ms', '1'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const [, url] = await waitFor(child.stdout!, /"base_url":"([^"]+)"/);
      const doctor = await installed(['doctor', url!]);
      expect(doctor.code, doctor.stderr).toBe(0);
      expect(doctor.stdout).toContain('verdict:     loadable: chat streams from loadfleet-sim');
      // Installed, the command is `loadfleet` (no ./).
      expect(doctor.stdout).toContain(`next: loadfleet init ${url}`);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('an installed agent joins a coordinator run from the clone', async () => {
    const work = tempDir();
    const plan = writePlan(work, constantRatePlan('pkg-agent', 2, 4));
    const token = 'pkg-test-token';
    const { coord, url } = await listeningCoordinator(['--agents', '1', '--plan', plan, '--out', join(work, 'out')], {
      LOADFLEET_TOKEN: token,
    });
    const agent = await loadfleet(['agent', '--coordinator', url, '--id', 'installed-1'], { ...env, LOADFLEET_TOKEN: token }, work, bin);
    const done = await coord.done;
    expect(agent.code, agent.stderr).toBe(0);
    expect(done.code, done.stderr).toBe(0);
    const run = readRunJson(onlyRunDir(join(work, 'out')));
    expect(run.agents.map((a: { agent_id: string }) => a.agent_id)).toEqual(['installed-1']);
    expect(run.classes[Object.keys(run.classes)[0]!].windows.all.requests).toBe(8);
  });

  it('runs the main job: `coordinator start` on the built-in plan, from an empty directory', async () => {
    const work = tempDir();
    const res = await installed(['coordinator', 'start', '--agents', '2', '--quiet'], work);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^run \S+-batch-interference-short-\S+: (completed|degraded)/);
    expect(res.stdout).toMatch(/realtime: SLO (MISSED|met)/);
    // The built-in plan receives the embedded engine-sim's spans: where realtime's TTFT went, beside its verdict.
    expect(res.stdout).toMatch(/ {4}where it went \([a-z ]+, the server's spans\): p95 TTFT [\d.]+ m?s: /);
    const run = readRunJson(onlyRunDir(join(work, 'runs')));
    expect(run.server_spans.requests_without_span).toBe(0);
    expect(run.classes.realtime.windows.all.requests).toBeGreaterThan(50);
    expect(existsSync(join(onlyRunDir(join(work, 'runs')), 'report.html'))).toBe(true);
  }, 240_000);
});
