// Offline checks of deploy/ beyond the Kubernetes manifests (those are in deploy-k8s*.test.ts):
// the systemd units (systemd-analyze verify and security), the Dockerfile's structure, and the
// image's entry point run for real.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { tempDir, waitFor } from './harness.js';
import { skipFor } from './require.js';

const DEPLOY = fileURLToPath(new URL('../deploy/', import.meta.url));
/** Image UID of deploy/Dockerfile's USER; the pods' runAsUser must match it. */
const IMAGE_UID = 10001;

const HAS_SYSTEMD_ANALYZE = spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).status === 0;
/** The exposure `systemd-analyze security` may report for any unit, on its 0-10 scale (the target: "in the 2-3 range"). */
const EXPOSURE_BOUND = 3;

describe.skipIf(skipFor('the systemd unit tests', HAS_SYSTEMD_ANALYZE ? null : 'systemd-analyze not found (apt-get install systemd)'))(
  'deploy/systemd',
  () => {
    const SYSTEMD = join(DEPLOY, 'systemd');
    const units = readdirSync(SYSTEMD).filter((f) => f.endsWith('.service'));
    const repo = fileURLToPath(new URL('../', import.meta.url));
    // An instance of each unit, with the install path pointing at this checkout so verify finds
    // the entry point it runs.
    const instance = (unit: string, text = readFileSync(join(SYSTEMD, unit), 'utf8')): string => {
      const dir = tempDir('loadfleet-units-');
      const path = join(dir, unit.replace('@.service', '@i27.service'));
      writeFileSync(path, text.replaceAll('/opt/loadfleet/', repo));
      return path;
    };
    const exposure = (path: string) => {
      const out = spawnSync('systemd-analyze', ['security', '--offline=true', `--threshold=${EXPOSURE_BOUND * 10}`, path], {
        encoding: 'utf8',
      });
      return { status: out.status, level: Number(/Overall exposure level for \S+: ([\d.]+)/.exec(out.stdout)?.[1]) };
    };
    const directives = (unit: string, key: string) =>
      readFileSync(join(SYSTEMD, unit), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith(`${key}=`))
        .map((l) => l.slice(key.length + 1));

    it('has a unit for the agents, one run, a sweep and an experiment', () => {
      expect(units.sort()).toEqual([
        'loadfleet-agent@.service',
        'loadfleet-coordinator.service',
        'loadfleet-experiment@.service',
        'loadfleet-sweep@.service',
      ]);
    });

    it.each(units)('%s passes systemd-analyze verify', (unit) => {
      const out = spawnSync('systemd-analyze', ['verify', '--man=no', instance(unit)], { encoding: 'utf8' });
      expect(out.stderr).toBe('');
      expect(out.status).toBe(0);
    });

    it.each(units)(`%s: systemd-analyze security --offline rates it at most ${EXPOSURE_BOUND}, with Node's JIT left alone`, (unit) => {
      const { status, level } = exposure(instance(unit));
      expect(level).toBeLessThanOrEqual(EXPOSURE_BOUND);
      expect(status, '--threshold agrees').toBe(0);
      expect(directives(unit, 'MemoryDenyWriteExecute'), 'V8 needs writable executable memory').toEqual([]);
      // The bound bites: the same unit without its hardening block scores far above it.
      const bare = readFileSync(join(SYSTEMD, unit), 'utf8').split('# Hardening')[0]!;
      const unhardened = exposure(instance(unit, bare));
      expect(unhardened.level).toBeGreaterThan(EXPOSURE_BOUND);
      expect(unhardened.status).not.toBe(0);
    });

    it('the agent spools into its StateDirectory, which survives restarts, and pins the CA', () => {
      const unit = 'loadfleet-agent@.service';
      expect(directives(unit, 'StateDirectory')).toEqual(['loadfleet/agent-%i']);
      const exec = directives(unit, 'ExecStart')[0]!;
      expect(exec).toContain('--spool-dir=%S/loadfleet/agent-%i');
      expect(exec).toContain('--ca=%d/ca.crt');
      expect(directives(unit, 'Restart')).toEqual(['on-failure']);
      expect(readFileSync(join(SYSTEMD, 'loadfleet.env.example'), 'utf8')).toMatch(/^LOADFLEET_COORDINATOR=wss:\/\//m);
    });

    it.each(units)('%s: secrets only as systemd credentials', (unit) => {
      const creds = directives(unit, 'LoadCredential').map((c) => c.split(':')[0]);
      expect(creds).toContain('token');
      expect(creds).toContain('api-key');
      const exec = directives(unit, 'ExecStart')[0]!;
      if (unit.startsWith('loadfleet-agent')) expect(creds).toContain('ca.crt');
      else {
        expect(creds).toEqual(expect.arrayContaining(['tls.crt', 'tls.key']));
        expect(exec).toContain('--tls-cert=%d/tls.crt --tls-key=%d/tls.key');
      }
      expect(exec).not.toMatch(/--token|API_KEY|SECRET/);
      const env = readFileSync(join(SYSTEMD, 'loadfleet.env.example'), 'utf8');
      expect(env).not.toMatch(/^(LOADFLEET_TOKEN|OPENAI_API_KEY|AWS_SECRET_ACCESS_KEY)=/m);
    });

    it('an experiment coordinator restarts and resumes; a one-plan run never restarts', () => {
      expect(directives('loadfleet-experiment@.service', 'ExecStart')[0]).toMatch(/ --resume$/);
      expect(directives('loadfleet-experiment@.service', 'Restart')).toEqual(['on-failure']);
      expect(directives('loadfleet-experiment@.service', 'RestartPreventExitStatus')).toEqual([
        `${ExitCode.INVALID_INPUT} ${ExitCode.ABORTED} ${ExitCode.SLO_MISSED}`,
      ]);
      expect(directives('loadfleet-coordinator.service', 'Restart')).toEqual(['no']);
    });
  },
);

/** Node.js LTS lines in support, with their end of life (nodejs.org release schedule); 20 ended 2026-04-30. */
const NODE_LTS_END: Record<string, string> = { '22': '2027-04-30', '24': '2028-04-30' };

describe('deploy/Dockerfile', () => {
  const dockerfile = readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8');
  const lines = dockerfile.split('\n').filter((l) => !l.trimStart().startsWith('#'));
  const instructions = (name: string) => lines.filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length + 1).trim());

  it('is multi-stage on a pinned base image, installs only production dependencies and runs as a non-root user', () => {
    expect(dockerfile).not.toMatch(/:latest\b/);
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    // An exact version of a supported LTS line; a release build adds the digest (deploy/bin/build-image).
    const major = /^node:(\d+)\.\d+\.\d+-[a-z]+(-slim)?(@sha256:[0-9a-f]{64})?$/.exec(base ?? '')?.[1];
    expect(Object.keys(NODE_LTS_END), `${base} is on a supported Node LTS line`).toContain(major);
    const froms = instructions('FROM');
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const f of froms) expect(f).toMatch(/^\$\{NODE_IMAGE\} AS [a-z]+$/);
    expect(dockerfile).toContain('npm run build');
    expect(dockerfile).toMatch(/npm ci --omit=dev --ignore-scripts/);
    expect(dockerfile).toContain('COPY --from=build /src/dist ./dist');
    expect(instructions('USER').at(-1)).toBe(`${IMAGE_UID}:${IMAGE_UID}`);
    expect(instructions('ENTRYPOINT').at(-1)).toBe('["/app/deploy/bin/loadfleet"]');
  });

  it('the runtime stage as laid out by its COPY lines runs the built-in plan: examples/ is inside', async () => {
    // The runtime stage, assembled without a container engine: each COPY of the last stage, from
    // this checkout (the build stage's /src/dist is this checkout's dist/).
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const app = tempDir('loadfleet-image-');
    const copies = [...runtime.matchAll(/^COPY (?:--chmod=\S+ )?(?:--from=build \/src\/)?(\S+) (\S+)$/gm)].map(
      (m) => [m[1]!, m[2]!] as const,
    );
    expect(copies.map(([from]) => from)).toEqual(expect.arrayContaining(['dist', 'examples', 'deploy/bin/loadfleet']));
    for (const [from, to] of copies) cpSync(join(DEPLOY, '..', from), join(app, to), { recursive: true });
    symlinkSync(join(DEPLOY, '../node_modules'), join(app, 'node_modules'));
    const check = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { DEFAULT_PLAN_FILE } = await import('${app}/dist/coordinator/default-plan.js');
         const { loadPlanFile } = await import('${app}/dist/shared/plan-load.js');
         const plan = await loadPlanFile(DEFAULT_PLAN_FILE);
         console.log(DEFAULT_PLAN_FILE, plan.name);`,
      ],
      { encoding: 'utf8' },
    );
    expect(check.stderr).toBe('');
    expect(check.stdout).toContain(`${app}/examples/batch-interference-short.plan.json`);
  });

  it('copies only what its .dockerignore lets into the build context', () => {
    const allowed = readFileSync(join(DEPLOY, 'Dockerfile.dockerignore'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, ''));
    const sources = instructions('COPY')
      .filter((c) => !c.startsWith('--from'))
      .flatMap((c) =>
        c
          .replace(/^--\S+\s+/, '')
          .split(/\s+/)
          .slice(0, -1),
      );
    expect(sources.length).toBeGreaterThan(0);
    for (const s of sources) expect(allowed, s).toContain(s.replace(/^\.\//, '').replace(/\/$/, ''));
  });
});

describe('deploy/bin/build-image', () => {
  // A stand-in docker that records its calls and knows one digest: the script's own logic runs.
  const fakeDocker = (dir: string) => {
    writeFileSync(
      join(dir, 'docker'),
      `#!/bin/sh\necho "$*" >>"${dir}/calls"\n[ "$1 $2 $3" = "buildx imagetools inspect" ] && echo '"sha256:${'ab'.repeat(32)}"'\nexit 0\n`,
      { mode: 0o755 },
    );
    return { PATH: `${dir}:/usr/bin:/bin` };
  };

  it('builds on the base pinned by digest and, with --push, pushes the tag the cluster pulls', () => {
    const dir = tempDir('loadfleet-build-image-');
    const out = spawnSync(join(DEPLOY, 'bin/build-image'), ['--push', 'registry.example.com/loadfleet:0.1.0'], {
      encoding: 'utf8',
      env: { ...process.env, ...fakeDocker(dir) },
    });
    expect(out.status, out.stderr).toBe(0);
    const calls = readFileSync(join(dir, 'calls'), 'utf8').trim().split('\n');
    expect(calls[1]).toMatch(
      new RegExp(
        `^build -f .*deploy/Dockerfile --build-arg NODE_IMAGE=node:[\\d.]+-bookworm-slim@sha256:${'ab'.repeat(32)} -t registry.example.com/loadfleet:0.1.0 `,
      ),
    );
    expect(calls[2]).toBe('push registry.example.com/loadfleet:0.1.0');
    // Without --push nothing leaves the machine.
    writeFileSync(join(dir, 'calls'), '');
    spawnSync(join(DEPLOY, 'bin/build-image'), ['registry.example.com/loadfleet:0.1.0'], { env: { ...process.env, ...fakeDocker(dir) } });
    expect(readFileSync(join(dir, 'calls'), 'utf8')).not.toMatch(/^push/m);
  });

  it('--local: podman with runc on the local base named for the Dockerfile’s Node.js, the CA bundle as the build secret npm-ca', () => {
    const dir = tempDir('loadfleet-build-image-local-');
    // A stand-in podman that has the base already (`image exists` succeeds), so local-base makes nothing.
    writeFileSync(join(dir, 'podman'), `#!/bin/sh\necho "$*" >>"${dir}/calls"\nexit 0\n`, { mode: 0o755 });
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n');
    const env = { ...process.env, PATH: `${dir}:/usr/bin:/bin`, LOADFLEET_CA_BUNDLE: ca };
    const out = spawnSync(join(DEPLOY, 'bin/build-image'), ['--local'], { encoding: 'utf8', env });
    expect(out.status, out.stderr).toBe(0);
    const node = /^ARG NODE_IMAGE=node:([\d.]+)-bookworm-slim/m.exec(readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8'))![1];
    const base = `localhost/loadfleet-base:node${node}-npm11.19.1-bookworm`;
    const calls = readFileSync(join(dir, 'calls'), 'utf8').trim().split('\n');
    expect(calls[0]).toBe(`image exists ${base}`);
    expect(calls[1]).toMatch(
      new RegExp(
        `^--runtime runc build .*-f \\S+/deploy/Dockerfile --build-arg NODE_IMAGE=${base} --secret id=npm-ca,src=${ca} -t localhost/loadfleet:local `,
      ),
    );
    // No CA bundle: no secret, and npm trusts what Node.js trusts.
    writeFileSync(join(dir, 'calls'), '');
    spawnSync(join(DEPLOY, 'bin/build-image'), ['--local', 'localhost/lf:t'], { env: { ...env, LOADFLEET_CA_BUNDLE: join(dir, 'none') } });
    expect(readFileSync(join(dir, 'calls'), 'utf8')).toMatch(/build .*NODE_IMAGE=\S+ -t localhost\/lf:t /);
    expect(readFileSync(join(dir, 'calls'), 'utf8')).not.toContain('--secret');
  });

  it('the Dockerfile mounts the CA secret for both npm ci steps and copies it into no layer', () => {
    const dockerfile = readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
    const npmCi = dockerfile.split('\n').filter((l) => /^RUN .*npm ci/.test(l));
    expect(npmCi).toHaveLength(2);
    for (const l of npmCi) expect(l).toMatch(/^RUN --mount=type=secret,id=npm-ca .*NODE_EXTRA_CA_CERTS=\/run\/secrets\/npm-ca/);
    expect(dockerfile).not.toMatch(/^(COPY|ADD|ENV)\b.*(npm-ca|ca-certificates)/m);
  });
});

describe('deploy/bin/loadfleet (the image entry point)', () => {
  const entry = join(DEPLOY, 'bin/loadfleet');
  // A fake install whose entry points print the arguments they were given.
  const home = tempDir('loadfleet-deploy-');
  for (const dir of ['agent', 'coordinator', 'sim']) {
    mkdirSync(join(home, 'dist', dir), { recursive: true });
    writeFileSync(join(home, 'dist', dir, 'main.js'), `console.log(JSON.stringify(['${dir}', ...process.argv.slice(2)]));\n`);
  }
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(entry, args, { encoding: 'utf8', env: { ...process.env, LOADFLEET_CLOCK_DOMAIN: '', ...env, LOADFLEET_HOME: home } });

  it('is executable and dispatches to each entry point', () => {
    accessSync(entry, constants.X_OK);
    expect(JSON.parse(run(['coordinator', 'start', '--agents=2']).stdout)).toEqual(['coordinator', 'start', '--agents=2']);
    expect(JSON.parse(run(['engine-sim', '--port=8000']).stdout)).toEqual(['sim', '--port=8000']);
    expect(JSON.parse(run(['agent', '--id=a-0']).stdout)).toEqual(['agent', '--id=a-0']);
    expect(run(['bogus']).status).toBe(2);
  });

  it('dispatches doctor and init to one program, keeping the command name; answers --version from the install', () => {
    mkdirSync(join(home, 'dist', 'coordinator', 'doctor'), { recursive: true });
    writeFileSync(join(home, 'dist', 'coordinator', 'doctor', 'main.js'), `console.log(JSON.stringify(process.argv.slice(2)));\n`);
    writeFileSync(join(home, 'package.json'), JSON.stringify({ name: 'loadfleet', version: '9.8.7' }));
    expect(JSON.parse(run(['doctor', 'http://h/v1', '--json']).stdout)).toEqual(['doctor', 'http://h/v1', '--json']);
    expect(JSON.parse(run(['init', 'http://h/v1']).stdout)).toEqual(['init', 'http://h/v1']);
    expect(run(['--version']).stdout).toBe('9.8.7\n');
  });

  it('turns systemd credentials into the variables the programs read; a variable already set wins', () => {
    const creds = tempDir('loadfleet-creds-');
    writeFileSync(join(creds, 'token'), 'tok-27\n');
    writeFileSync(join(creds, 'api-key'), 'sk-27');
    writeFileSync(join(creds, 'env.AWS_SECRET_ACCESS_KEY'), 'aws-27');
    writeFileSync(join(creds, 'env.BAD NAME'), 'x');
    writeFileSync(join(creds, 'tls.key'), 'not exported');
    const printEnv = tempDir('loadfleet-deploy-env-');
    mkdirSync(join(printEnv, 'dist/agent'), { recursive: true });
    const names = ['LOADFLEET_TOKEN', 'MY_KEY', 'AWS_SECRET_ACCESS_KEY'];
    writeFileSync(
      join(printEnv, 'dist/agent/main.js'),
      `console.log(JSON.stringify(${JSON.stringify(names)}.map((n) => process.env[n] ?? null)));\n`,
    );
    const env = (extra: Record<string, string>) => {
      const e: Record<string, string | undefined> = {
        ...process.env,
        CREDENTIALS_DIRECTORY: creds,
        LOADFLEET_API_KEY_ENV: 'MY_KEY',
        LOADFLEET_HOME: printEnv,
        ...extra,
      };
      for (const n of names) if (!(n in extra)) delete e[n];
      return e;
    };
    const out = spawnSync(entry, ['agent'], { encoding: 'utf8', env: env({}) });
    expect(JSON.parse(out.stdout)).toEqual(['tok-27', 'sk-27', 'aws-27']);
    const set = spawnSync(entry, ['agent'], { encoding: 'utf8', env: env({ LOADFLEET_TOKEN: 'from-env' }) });
    expect(JSON.parse(set.stdout)[0]).toBe('from-env');
  });

  it("execs the agent, so the container's stop signal (SIGINT) or a SIGTERM reaches the agent itself, which hands over on both", async () => {
    // A fake agent that reports every signal it gets and leaves as the real one does (130).
    const home2 = tempDir('loadfleet-deploy-signal-');
    mkdirSync(join(home2, 'dist/agent'), { recursive: true });
    writeFileSync(
      join(home2, 'dist/agent/main.js'),
      `for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => { console.log(s); setTimeout(() => process.exit(130), 200); });
       console.log('ready'); setInterval(() => {}, 1000);\n`,
    );
    const child = spawn(entry, ['agent'], {
      env: { ...process.env, LOADFLEET_CLOCK_DOMAIN: '', LOADFLEET_HOME: home2 },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await waitFor(child.stdout, /ready/);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(out.trim().split('\n')).toEqual(['ready', 'SIGINT']);
    expect(code).toBe(130);
    // A supervisor's SIGTERM reaches it the same way.
    const again = spawn(entry, ['agent'], {
      env: { ...process.env, LOADFLEET_CLOCK_DOMAIN: '', LOADFLEET_HOME: home2 },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out2 = '';
    again.stdout.on('data', (c: Buffer) => (out2 += c.toString()));
    await waitFor(again.stdout, /ready/);
    again.kill('SIGTERM');
    expect(await new Promise<number | null>((resolve) => again.on('exit', resolve))).toBe(130);
    expect(out2.trim().split('\n')).toEqual(['ready', 'SIGTERM']);
  });

  it('with an upload after the coordinator, passes each stop signal on as it came and keeps its exit status', async () => {
    // A fake coordinator that reports every signal it gets and leaves as the real one does (130).
    const home3 = tempDir('loadfleet-deploy-upload-signal-');
    mkdirSync(join(home3, 'dist/coordinator'), { recursive: true });
    writeFileSync(
      join(home3, 'dist/coordinator/main.js'),
      `if (process.argv[2] === 'upload') process.exit(0);
       for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => { console.log(s); setTimeout(() => process.exit(130), 200); });
       console.log('ready'); setInterval(() => {}, 1000);\n`,
    );
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const child = spawn(entry, ['coordinator', 'start'], {
        env: { ...process.env, LOADFLEET_HOME: home3, LOADFLEET_UPLOAD_URL: 's3://b/p', LOADFLEET_UPLOAD_DIR: join(home3, 'none') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      await waitFor(child.stdout, /ready/);
      child.kill(signal);
      expect(await new Promise<number | null>((resolve) => child.on('exit', resolve)), signal).toBe(130);
      expect(out.trim().split('\n')).toEqual(['ready', signal]);
    }
  });

  it('turns a non-empty LOADFLEET_CLOCK_DOMAIN into --clock-domain for agents only, before explicit arguments', () => {
    const env = { LOADFLEET_CLOCK_DOMAIN: 'ptp:rack-a' };
    expect(JSON.parse(run(['agent', '--id=a-0'], env).stdout)).toEqual(['agent', '--clock-domain', 'ptp:rack-a', '--id=a-0']);
    expect(JSON.parse(run(['coordinator', 'start'], env).stdout)).toEqual(['coordinator', 'start']);
  });
});
