// Driving a real coordinator with synthetic fleets (synthetic-fleet.ts), for the suites that
// measure the coordinator itself (coordinator_ingest, coordinator_memory): the coordinator started
// as `start --listen … --agents N`, the fleet processes forked beside it, and their IPC events.
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseExact } from '../shared/json.js';
import type { Plan } from '../shared/plan.js';
import type { FleetCommand, FleetEvent } from './fleet-protocol.js';
import type { Child } from './spawn.js';
import { distFile, sleep, startNode } from './spawn.js';

const TOKEN = 'bench-fleet-token';
/** Synthetic agents per fleet process (a process holds this many WebSockets comfortably). */
export const AGENTS_PER_FLEET = 500;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = connect(port, '127.0.0.1', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`the coordinator did not listen on ${port} within ${timeoutMs} ms`);
}

/** One fleet process and a way to ask it for its counters. */
export class Fleet {
  readonly child: ChildProcess;
  readonly started: Promise<void>;
  /** Resolves when every agent of the process has sent its stream and its final (stream mode). */
  readonly streamed: Promise<Extract<FleetEvent, { type: 'streamed' }>>;
  private reportWaiter: ((e: Extract<FleetEvent, { type: 'report' }>) => void) | undefined;
  private pacedWaiter: ((e: Extract<FleetEvent, { type: 'paced' }>) => void) | undefined;
  errors: string[] = [];

  constructor(url: string, first: number, count: number) {
    this.child = fork(distFile('bench/synthetic-fleet.js'), [url, TOKEN, String(first), String(count)], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let onStreamed: (e: Extract<FleetEvent, { type: 'streamed' }>) => void = () => {};
    this.streamed = new Promise((resolve) => (onStreamed = resolve));
    this.started = new Promise((resolve, reject) => {
      this.child.on('message', (e: FleetEvent) => {
        if (e.type === 'started') resolve();
        else if (e.type === 'report') this.reportWaiter?.(e);
        else if (e.type === 'streamed') onStreamed(e);
        else if (e.type === 'paced') this.pacedWaiter?.(e);
        else if (this.errors.length < 5) this.errors.push(e.message);
      });
      this.child.once('exit', (code) =>
        reject(new Error(`a fleet process exited (${code}) before its agents started: ${this.errors.join('; ')}`)),
      );
    });
    this.started.catch(() => {});
  }

  command(c: FleetCommand): void {
    this.child.send(c);
  }

  /** What the process saw of each paced second so far. */
  pacedReport(): Promise<Extract<FleetEvent, { type: 'paced' }>> {
    return new Promise((resolve) => {
      this.pacedWaiter = resolve;
      this.command({ cmd: 'paced_report' });
    });
  }

  report(): Promise<Extract<FleetEvent, { type: 'report' }>> {
    return new Promise((resolve) => {
      this.reportWaiter = resolve;
      this.command({ cmd: 'report' });
    });
  }
}

/** A coordinator waiting for `agents` synthetic agents, and its fleets once they have all started. */
export interface FleetRun {
  root: string;
  out: string;
  coord: Child;
  fleets: Fleet[];
  /** Seconds from starting the coordinator until every agent was armed. */
  joinS: number;
}

/** Starts a coordinator for `plan` and enough fleet processes for `agents` agents; resolves once all are started. */
export async function startFleetRun(prefix: string, plan: Plan, agents: number, env: Record<string, string> = {}): Promise<FleetRun> {
  const root = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(root, 'plan.json'), JSON.stringify(plan));
  const out = join(root, 'out');
  const port = await freePort();
  const t0 = performance.now();
  const coord = startNode(
    'coordinator/main.js',
    [
      'start',
      ...['--agents', String(agents), '--plan', join(root, 'plan.json'), '--out', out],
      ...['--listen', `127.0.0.1:${port}`, '--token', TOKEN, '--join-timeout-s', '120', '--on-clock-mismatch', 'align', '--quiet'],
      ...['--headroom', 'warn'],
    ],
    env,
  );
  const run: FleetRun = { root, out, coord, fleets: [], joinS: 0 };
  try {
    await waitForPort(port, 10_000);
    for (let first = 0; first < agents; first += AGENTS_PER_FLEET)
      run.fleets.push(new Fleet(`ws://127.0.0.1:${port}`, first, Math.min(AGENTS_PER_FLEET, agents - first)));
    await Promise.race([
      Promise.all(run.fleets.map((f) => f.started)),
      coord.exited.then((d) => Promise.reject(new Error(`coordinator exited ${d.code}: ${d.stderr.slice(-1500)}`))),
    ]);
  } catch (err) {
    await stopFleetRun(run);
    // The coordinator's last words say why (a join timeout, a refused agent, …).
    const said = (await coord.exited).stderr.trim().split('\n').slice(-6).join(' | ');
    throw new Error(`${(err as Error).message}; coordinator: ${said.slice(-1200)}`);
  }
  run.joinS = (performance.now() - t0) / 1000;
  return run;
}

/** Kills the fleets, stops the coordinator (if still there) and removes the run's files. */
export async function stopFleetRun(run: FleetRun): Promise<void> {
  for (const f of run.fleets) f.child.kill('SIGKILL');
  await run.coord.stop();
  rmSync(run.root, { recursive: true, force: true });
}

/** The run.json the coordinator wrote under `out` (its only run), or null. */
export function readRun<T = { status: string }>(out: string): T | null {
  try {
    return parseExact<T>(readFileSync(join(out, readdirSync(out)[0]!, 'run.json'), 'utf8'));
  } catch {
    return null;
  }
}
