// The image as containers run it: `deploy/bin/build-image --local` builds deploy/Dockerfile with
// podman, and engine-sim, a coordinator and two agents run as containers of it on one podman
// network, as the pods run them — the image's own non-root user, a read-only root filesystem with
// only /tmp writable, every capability dropped, results on a named volume. A plan completes with
// every request once; an agent stopped by `podman stop` (the image's STOPSIGNAL, SIGKILL only after
// the grace) hands its finished requests over; a coordinator killed by `podman kill` and started
// again (the same command, the same volume) completes its crashed run with every request once.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { constantRatePlan, readRequests, readRunJson, tempDir } from './harness.js';
import { skipFor } from './require.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const IMAGE = 'localhost/loadfleet:local';
/** The image's USER (deploy/Dockerfile). */
const IMAGE_UID = 10001;
const TOKEN = 'containers-token';
const run = promisify(execFile);

// crun refuses this machine's cgroup layout; runc runs. Without lower limits than the host's,
// runc cannot set the container's rlimits here.
const PODMAN = ['--runtime', 'runc'];
const LIMITS = ['--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=2000:2000'];

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

/** What is lacking to build and run the image here, after installing it when we can (apt, as root). */
function containerEngine(): string | null {
  if (process.platform !== 'linux') return 'Linux';
  if (process.getuid?.() !== 0) return 'root (rootful podman; the local base is made with mmdebstrap as root)';
  const wanted = ['podman', 'runc', 'mmdebstrap'];
  if (wanted.some((t) => !has(t))) {
    const apt = spawnSync(
      'sh',
      ['-c', `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${wanted.join(' ')} >/dev/null`],
      { encoding: 'utf8', timeout: 300_000 },
    );
    if (apt.status !== 0)
      return `podman, runc and mmdebstrap (apt-get install podman runc mmdebstrap failed: ${apt.stderr.trim().slice(-300)})`;
  }
  if (spawnSync('podman', [...PODMAN, 'info'], { timeout: 60_000 }).status !== 0) return 'a working podman with the runc runtime';
  return null;
}

const podman = async (args: readonly string[], timeoutMs = 60_000): Promise<string> =>
  (await run('podman', [...PODMAN, ...args], { timeout: timeoutMs, maxBuffer: 64 << 20 })).stdout.trim();

/** Everything a container printed, stdout and stderr. */
async function logs(name: string): Promise<string> {
  const { stdout, stderr } = await run('podman', [...PODMAN, 'logs', name], { maxBuffer: 64 << 20 });
  return stdout + stderr;
}

/** Resolves with the container's output once it matches `pattern` (a RegExp, or a test of the whole output). */
async function untilLogged(name: string, pattern: RegExp | ((out: string) => boolean), timeoutMs = 60_000): Promise<string> {
  const matches = typeof pattern === 'function' ? pattern : (out: string) => pattern.test(out);
  const until = Date.now() + timeoutMs;
  for (;;) {
    const out = await logs(name);
    if (matches(out)) return out;
    if (Date.now() > until) throw new Error(`timed out waiting for ${pattern} in ${name}; got:\n${out}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The container's exit status once it has stopped. */
async function exitCode(name: string, timeoutMs = 120_000): Promise<number> {
  return Number(await podman(['wait', name], timeoutMs));
}

describe.skipIf(skipFor('the container tests', containerEngine()))('the image as containers', () => {
  const prefix = `lf-ct-${process.pid}`;
  const network = prefix;
  const sim = `${prefix}-sim`;
  const containers: string[] = [];
  const volumes: string[] = [];
  const work = tempDir('loadfleet-containers-');

  /** Starts a container of the image, as the pods run it (deploy/k8s/base). */
  async function container(name: string, args: readonly string[], extra: readonly string[] = []): Promise<void> {
    containers.push(name);
    await podman([
      'run',
      '--detach',
      '--name',
      name,
      '--network',
      network,
      '--read-only',
      '--read-only-tmpfs=false',
      '--tmpfs',
      '/tmp:rw,size=64m,mode=1777',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      ...LIMITS,
      '--env',
      `LOADFLEET_TOKEN=${TOKEN}`,
      ...extra,
      IMAGE,
      ...args,
    ]);
  }

  /** A results volume of its own, and the host directory it lives in. */
  async function resultsVolume(name: string): Promise<string> {
    volumes.push(name);
    await podman(['volume', 'create', name]);
    return podman(['volume', 'inspect', name, '--format', '{{.Mountpoint}}']);
  }

  /** A plan against the engine-sim container, mounted read-only where the Job mounts its ConfigMap. */
  function planMount(name: string, durationS: number, rate: number): string[] {
    const plan: Plan = {
      ...constantRatePlan(name, durationS, rate),
      target: { base_url: `http://${sim}:8000/v1`, api: 'chat', model: 'loadfleet-sim', timeout_s: 10 },
    };
    const file = join(work, `${name}.plan.json`);
    writeFileSync(file, JSON.stringify(plan));
    return ['--volume', `${file}:/etc/loadfleet/plan.json:ro`];
  }

  const coordinatorArgs = (extra: readonly string[]) => [
    'coordinator',
    'start',
    '--agents',
    '2',
    '--plan',
    '/etc/loadfleet/plan.json',
    '--listen',
    '0.0.0.0:7000',
    '--out',
    '/results',
    ...extra,
  ];
  const agentArgs = (coordinator: string, id: string, extra: readonly string[] = []) => [
    'agent',
    '--coordinator',
    `ws://${coordinator}:7000`,
    '--id',
    id,
    ...extra,
  ];

  /** The one run directory on a results volume. */
  function onlyRun(mount: string): string {
    const dirs = readdirSync(mount);
    expect(dirs, 'one run directory on the volume').toHaveLength(1);
    return join(mount, dirs[0]!);
  }

  function expectEveryRequestOnce(dir: string, planned: number): any[] {
    const rows = readRequests(dir);
    const indices = rows.map((r) => Number(r.request_index)).sort((a, b) => a - b);
    expect(indices).toEqual(Array.from({ length: planned }, (_, i) => i));
    return rows;
  }

  beforeAll(async () => {
    // The build a user runs; podman's layer cache keys each step on its inputs, so an unchanged
    // tree rebuilds in seconds and a changed source file recompiles from its COPY on.
    const started = Date.now();
    const build = spawn(join(REPO_ROOT, 'deploy/bin/build-image'), ['--local', IMAGE], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    build.stdout.on('data', (c: Buffer) => (out += c.toString()));
    build.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => build.on('exit', resolve));
    if (code !== 0) throw new Error(`build-image --local failed (${code}):\n${out.slice(-4000)}`);
    console.log(`containers: build-image --local took ${((Date.now() - started) / 1000).toFixed(1)} s`);

    await podman(['network', 'create', network]);
    await container(sim, ['engine-sim', '--host', '0.0.0.0', '--port', '8000', '--ttft-ms', '10', '--itl-ms', '4']);
  }, 900_000);

  afterAll(async () => {
    if (containers.length > 0) await podman(['rm', '--force', '--time', '0', ...containers]).catch(() => {});
    if (volumes.length > 0) await podman(['volume', 'rm', '--force', ...volumes]).catch(() => {});
    await podman(['network', 'rm', '--force', network]).catch(() => {});
  }, 120_000);

  it('runs a plan as the non-root user on a read-only root: completed, every request once, written by the image user', async () => {
    expect(await podman(['image', 'inspect', IMAGE, '--format', '{{.Config.User}} {{.Config.StopSignal}}'])).toBe(
      `${IMAGE_UID}:${IMAGE_UID} SIGINT`,
    );
    const mount = await resultsVolume(`${prefix}-plan`);
    const coord = `${prefix}-c1`;
    await container(coord, coordinatorArgs([]), [...planMount('ct-plan', 4, 10), '--volume', `${prefix}-plan:/results`]);
    for (const id of ['p1', 'p2']) await container(`${prefix}-${id}`, agentArgs(coord, id));
    expect(await exitCode(coord), await logs(coord)).toBe(0);
    for (const id of ['p1', 'p2']) expect(await exitCode(`${prefix}-${id}`)).toBe(0);

    const dir = onlyRun(mount);
    const runJson = readRunJson(dir);
    // `completed`, or `degraded` only for this machine's own health (a client-limited agent, a start
    // skewed by a busy loop), as the examples' test allows: a shared 2-core host is not the image's fault.
    if (runJson.status !== 'completed') {
      expect(runJson.status, runJson.status_reason).toBe('degraded');
      expect(runJson.status_reason).toMatch(/^(start skew [^;]*; )?client limited: |^start skew [^;]*$/);
    }
    const rows = expectEveryRequestOnce(dir, 40);
    expect(rows.every((r) => r.status === 'ok')).toBe(true);
    expect(new Set(rows.map((r) => r.agent_id))).toEqual(new Set(['p1', 'p2']));
    // The coordinator ran as the image's user: the volume's run directory and files are its own.
    for (const f of ['', 'run.json', 'requests.ndjson']) expect(statSync(join(dir, f)).uid).toBe(IMAGE_UID);
  }, 180_000);

  it('podman stop of an agent mid-run: SIGINT, not the SIGKILL after the grace; it hands its finished requests over and the run ends degraded', async () => {
    const mount = await resultsVolume(`${prefix}-stop`);
    const coord = `${prefix}-c2`;
    await container(coord, coordinatorArgs(['--max-agent-loss', '1']), [
      ...planMount('ct-stop', 6, 10),
      '--volume',
      `${prefix}-stop:/results`,
    ]);
    const keeps = `${prefix}-keeps`;
    const leaves = `${prefix}-leaves`;
    // The first case starts its agents as the pods do, self-test included; here what counts is the
    // stop, so the agents join at once.
    await container(keeps, agentArgs(coord, 'keeps', ['--self-test', 'skip']));
    await container(leaves, agentArgs(coord, 'leaves', ['--self-test', 'skip']));
    // Two seconds into the load: the agent has finished requests on its spool and more in flight.
    await untilLogged(coord, /t=2s/);
    const stoppedAt = Date.now();
    await podman(['stop', '--time', '20', leaves], 60_000);
    const stopS = (Date.now() - stoppedAt) / 1000;
    const left = await logs(leaves);
    expect(await exitCode(leaves), left).toBe(130); // INTERRUPTED: its own exit, not 137 (SIGKILL)
    expect(stopS, 'gone well within the grace').toBeLessThan(10);
    expect(left).toContain('SIGINT: stopping the load');
    expect(left).toMatch(/handed over its run; exiting/);
    console.log(`containers: podman stop of an agent took ${stopS.toFixed(1)} s`);

    expect(await exitCode(coord), await logs(coord)).toBe(0);
    expect(await exitCode(keeps)).toBe(0);
    const dir = onlyRun(mount);
    const runJson = readRunJson(dir);
    expect(runJson.status).toBe('degraded');
    expect(runJson.status_reason).toMatch(/agent leaves was lost \(the agent was terminated \(SIGINT\); it handed over its \d+ requests\)/);
    const lost = runJson.agents.find((a: { agent_id: string }) => a.agent_id === 'leaves');
    expect(lost.status).toBe('lost');
    const rows = readRequests(dir);
    const its = rows.filter((r) => r.agent_id === 'leaves');
    expect(its.length).toBeGreaterThan(5);
    expect(its.length).toBe(lost.requests);
    expect(new Set(rows.map((r) => r.request_index)).size, 'no request twice').toBe(rows.length);
    // The other agent ran its whole share: 6 s at 5/s.
    expect(rows.filter((r) => r.agent_id === 'keeps' && r.status === 'ok')).toHaveLength(30);
  }, 180_000);

  it('podman kill of the coordinator, then podman start (the same command and volume): the crashed run completed, every request once', async () => {
    const mount = await resultsVolume(`${prefix}-kill`);
    const coord = `${prefix}-c3`;
    await container(coord, coordinatorArgs(['--agent-grace-s', '30']), [
      ...planMount('ct-kill', 8, 10),
      '--volume',
      `${prefix}-kill:/results`,
    ]);
    // Standing agents: a coordinator that goes away is waited for, its run held for its grace.
    const agents = ['s1', 's2'].map((id) => `${prefix}-${id}`);
    for (const [i, name] of agents.entries()) await container(name, agentArgs(coord, `s${i + 1}`, ['--stay', '--self-test', 'skip']));
    await untilLogged(coord, /t=3s/);
    await podman(['kill', coord]);
    expect(await exitCode(coord)).toBe(137);
    const crashed = readdirSync(mount);
    expect(crashed).toHaveLength(1);
    await podman(['start', coord]);
    // The restarted coordinator says first whether it takes the run up; a second "waiting for"
    // without that line is a new run beside the crashed one.
    const taking = 'was not finished (its journal is there): recovering it instead of starting a new run';
    const said = await untilLogged(coord, (out) => out.includes(taking) || out.split('waiting for 2 agent(s)').length > 2);
    expect(said).toContain(taking);
    const code = await exitCode(coord);
    expect(code, await logs(coord)).toBe(0);
    expect(readdirSync(mount), 'the crashed run completed, not a second one started').toEqual(crashed);
    const dir = join(mount, crashed[0]!);
    const runJson = readRunJson(dir);
    expect(runJson.requests).toBe(80);
    expect(runJson.recovered).toBeDefined();
    expect(runJson.recovered.during_load).toBe(true);
    expectEveryRequestOnce(dir, 80);
    for (const a of runJson.agents) expect(a.outages.at(-1)).toMatchObject({ reason: 'the coordinator stopped', resumed: true });
    await podman(['stop', '--time', '20', ...agents], 60_000);
  }, 240_000);
});
