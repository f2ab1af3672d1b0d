// Test harness: runs the real coordinator, agent and engine-sim processes from dist/ and reads
// the artifacts they write. Nothing here fakes a component.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseExact } from '../shared/json.js';
import type { Plan } from '../shared/plan.js';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));

/** Path of a compiled entry point, e.g. `coordinator/main.js`. */
export function distPath(rel: string): string {
  return join(DIST, rel);
}

/** A fresh temporary directory. */
export function tempDir(prefix = 'loadfleet-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A finished process. */
export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Spawns `node <entry> ...args` and collects its output. `prefix` runs it through other commands
 * first (e.g. `ip netns exec NS faketime -f +0.25s`).
 */
export function startNode(
  entry: string,
  args: readonly string[],
  env: Record<string, string> = {},
  prefix: readonly string[] = [],
): { child: ChildProcess; done: Promise<Finished> } {
  const argv = [...prefix, process.execPath, distPath(entry), ...args];
  const child = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Finished>((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

/** Runs `coordinator start …` to completion. */
export function runCoordinator(args: readonly string[], env: Record<string, string> = {}): Promise<Finished> {
  return startNode('coordinator/main.js', ['start', ...args], env).done;
}

/** The only run directory under `out`. */
export function onlyRunDir(out: string): string {
  const dirs = readdirSync(out);
  if (dirs.length !== 1) throw new Error(`expected one run directory in ${out}, found ${dirs.join(', ')}`);
  return join(out, dirs[0]!);
}

/** run.json with ns integers as bigint. */
export function readRunJson(dir: string): any {
  return parseExact(readFileSync(join(dir, 'run.json'), 'utf8'));
}

/** requests.ndjson rows with ns integers as bigint. */
export function readRequests(dir: string): any[] {
  return readFileSync(join(dir, 'requests.ndjson'), 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => parseExact(l));
}

/** Starts engine-sim on a free port; resolves with its URLs and a stop function. */
export async function startSim(args: readonly string[] = []): Promise<{ baseUrl: string; stop(): void }> {
  const { child } = startNode('sim/main.js', ['--port', '0', ...args]);
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const nl = buf.indexOf('\n');
      if (nl !== -1) resolve(buf.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`engine-sim exited ${code}`)));
  });
  const { base_url } = JSON.parse(line) as { base_url: string };
  return { baseUrl: base_url, stop: () => void child.kill('SIGTERM') };
}

/** Writes a plan to a temp file and returns its path. */
export function writePlan(dir: string, plan: unknown, name = 'plan.json'): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(plan, null, 2));
  return path;
}

/** A one-class constant-rate plan against the embedded engine-sim: the e2e tests' usual load. */
export function constantRatePlan(name: string, durationS: number, ratePerS: number, tokens = { input_tokens: 16, output_tokens: 8 }): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name,
    seed: 1,
    duration_s: durationS,
    drain_timeout_s: 5,
    classes: [
      {
        name: 'rt',
        prompt: tokens,
        load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: durationS, rate_per_s: ratePerS }] },
      },
    ],
  };
}

/** Resolves with the first match of `pattern` in what `stream` prints. */
export function waitFor(stream: NodeJS.ReadableStream, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; got:\n${buf}`)), timeoutMs);
    stream.on('data', (c: Buffer) => {
      buf += c.toString();
      const m = pattern.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
  });
}

/** Starts `coordinator start --listen 127.0.0.1:0 …args` and resolves once it says where agents connect. */
export async function listeningCoordinator(
  args: readonly string[],
  env: Record<string, string>,
  prefix: readonly string[] = [],
): Promise<{ coord: ReturnType<typeof startNode>; url: string }> {
  const coord = startNode('coordinator/main.js', ['start', '--listen', '127.0.0.1:0', ...args], env, prefix);
  const [, url] = await waitFor(coord.child.stderr!, /waiting for \d+ agent\(s\) at (wss?:\/\/[\d.:]+)/);
  return { coord, url: url! };
}

/** A free loopback port (bound, then released), for a server a test starts and restarts itself. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Runs `plan` with `coordinator start` (plus `args`), requires exit 0, and reads its run.json and requests. */
export async function runPlanToEnd(plan: Plan, args: readonly string[] = []): Promise<{ run: any; rows: any[] }> {
  const work = tempDir();
  const res = await runCoordinator([...args, '--plan', writePlan(work, plan), '--out', join(work, 'out'), '--quiet']);
  if (res.code !== 0) throw new Error(`coordinator exited ${res.code}:\n${res.stderr}`);
  const dir = onlyRunDir(join(work, 'out'));
  return { run: readRunJson(dir), rows: readRequests(dir) };
}

/** This clone's `loadfleet` command. */
export const CLONE_LOADFLEET = fileURLToPath(new URL('../loadfleet', import.meta.url));

/** Runs a `loadfleet` command (this clone's `./loadfleet` unless `entry` names another) with ARGS, in `cwd`, to completion. */
export function loadfleet(
  args: readonly string[],
  env: Record<string, string> = {},
  cwd?: string,
  entry = CLONE_LOADFLEET,
): Promise<Finished> {
  const child = spawn(entry, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd && { cwd }) });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}
