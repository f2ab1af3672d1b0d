// coordinator_ingest: what one coordinator absorbs from a fleet of agents. A real coordinator
// (`start --listen … --agents N`) is fed by synthetic agents (synthetic-fleet.ts) in a few
// processes: first record batches as fast as it acknowledges them, then interval histograms.
// Rates are counted from acknowledgements (processed, not merely sent), per wall second and per
// second of the coordinator's own CPU (from /proc).
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseExact } from '../shared/json.js';
import type { Plan } from '../shared/plan.js';
import type { FleetCommand, FleetEvent } from './fleet-protocol.js';
import { BATCH_ROWS, INTERVAL_METRICS } from './fleet-protocol.js';
import { processCpuMs, rssKib } from './proc.js';
import { round3 } from './sampler.js';
import type { Child } from './spawn.js';
import { distFile, sleep, startNode } from './spawn.js';
import type { BenchContext, Suite, SuiteResult, TableRow } from './suite.js';
import { fmt } from './suite.js';

const TOKEN = 'bench-ingest-token';
/** Synthetic agents per fleet process (a process holds this many WebSockets comfortably). */
const AGENTS_PER_FLEET = 500;

// The coordinator never contacts the target; the plan only has to be valid and long enough.
const PLAN: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'bench-ingest',
  seed: 1,
  duration_s: 120,
  drain_timeout_s: 0,
  target: { base_url: 'http://127.0.0.1:9/v1', api: 'chat', model: 'none', timeout_s: 10 },
  classes: [
    {
      name: 'bench',
      prompt: { input_tokens: 16, output_tokens: 128 },
      load: { model: 'concurrency', phases: [{ start_s: 0, duration_s: 120, concurrency: 1 }] },
    },
  ],
};

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
class Fleet {
  readonly child: ChildProcess;
  readonly started: Promise<void>;
  private reportWaiter: ((e: Extract<FleetEvent, { type: 'report' }>) => void) | undefined;
  errors: string[] = [];

  constructor(url: string, first: number, count: number) {
    this.child = fork(distFile('bench/synthetic-fleet.js'), [url, TOKEN, String(first), String(count)], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.started = new Promise((resolve, reject) => {
      this.child.on('message', (e: FleetEvent) => {
        if (e.type === 'started') resolve();
        else if (e.type === 'report') this.reportWaiter?.(e);
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

  report(): Promise<Extract<FleetEvent, { type: 'report' }>> {
    return new Promise((resolve) => {
      this.reportWaiter = resolve;
      this.command({ cmd: 'report' });
    });
  }
}

interface Mark {
  ms: number;
  cpuMs: number;
  records: number;
  intervals: number;
}

async function mark(coordPid: number, fleets: readonly Fleet[]): Promise<Mark> {
  const reports = await Promise.all(fleets.map((f) => f.report()));
  return {
    ms: performance.now(),
    cpuMs: processCpuMs(coordPid) ?? Number.NaN,
    records: reports.reduce((n, r) => n + r.records_acked, 0),
    intervals: reports.reduce((n, r) => n + r.intervals_acked, 0),
  };
}

function rates(a: Mark, b: Mark, field: 'records' | 'intervals') {
  const wallS = (b.ms - a.ms) / 1000;
  const cpuS = (b.cpuMs - a.cpuMs) / 1000;
  const n = b[field] - a[field];
  return { per_s: Math.round(n / wallS), per_coordinator_cpu_s: Math.round(n / cpuS), coordinator_cpu_utilisation: round3(cpuS / wallS) };
}

async function measure(agents: number, phaseS: number) {
  const root = mkdtempSync(join(tmpdir(), 'loadfleet-bench-ingest-'));
  writeFileSync(join(root, 'plan.json'), JSON.stringify(PLAN));
  const port = await freePort();
  const t0 = performance.now();
  const coord: Child = startNode('coordinator/main.js', [
    'start',
    ...['--agents', String(agents), '--plan', join(root, 'plan.json'), '--out', join(root, 'out')],
    ...['--listen', `127.0.0.1:${port}`, '--token', TOKEN, '--join-timeout-s', '120', '--on-clock-mismatch', 'align', '--quiet'],
  ]);
  const fleets: Fleet[] = [];
  try {
    await waitForPort(port, 10_000);
    for (let first = 0; first < agents; first += AGENTS_PER_FLEET)
      fleets.push(new Fleet(`ws://127.0.0.1:${port}`, first, Math.min(AGENTS_PER_FLEET, agents - first)));
    await Promise.race([
      Promise.all(fleets.map((f) => f.started)),
      coord.exited.then((d) => Promise.reject(new Error(`coordinator exited ${d.code}: ${d.stderr.slice(-1500)}`))),
    ]);
    const joinS = (performance.now() - t0) / 1000;
    await sleep(1000);
    let peakRss = 0;
    const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, rssKib(coord.pid) ?? 0)), 200);
    for (const f of fleets) f.command({ cmd: 'records' });
    const r0 = await mark(coord.pid, fleets);
    await sleep(phaseS * 1000);
    const r1 = await mark(coord.pid, fleets);
    for (const f of fleets) f.command({ cmd: 'intervals' });
    await sleep(1000); // let the record batches still in flight drain
    const i0 = await mark(coord.pid, fleets);
    await sleep(phaseS * 1000);
    const i1 = await mark(coord.pid, fleets);
    clearInterval(rssTimer);
    for (const f of fleets) f.command({ cmd: 'final' });
    const done = await coord.exited;
    const run = readRun(join(root, 'out'));
    const intervals = rates(i0, i1, 'intervals');
    return {
      agents,
      fleet_processes: fleets.length,
      join_and_arm_s: round3(joinS),
      records: rates(r0, r1, 'records'),
      intervals: { ...intervals, histogram_merges_per_s: intervals.per_s * INTERVAL_METRICS.length },
      histograms_per_interval: INTERVAL_METRICS.length,
      coordinator_peak_rss_mib: round3(peakRss / 1024),
      run_status: run?.status ?? `no run.json (exit ${done.code})`,
      fleet_errors: fleets.flatMap((f) => f.errors).slice(0, 5),
    };
  } finally {
    for (const f of fleets) f.child.kill('SIGKILL');
    await coord.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

function readRun(out: string): { status: string } | null {
  try {
    return parseExact<{ status: string }>(readFileSync(join(out, readdirSync(out)[0]!, 'run.json'), 'utf8'));
  } catch {
    return null;
  }
}

async function run(ctx: BenchContext): Promise<SuiteResult> {
  const sizes = ctx.quick ? [10, 40] : [100, 1000];
  const phaseS = ctx.quick ? 1 : 5;
  const out = [];
  for (const n of sizes) {
    ctx.log(`coordinator_ingest: ${n} synthetic agents`);
    out.push(await measure(n, phaseS));
  }
  const table: TableRow[] = out.flatMap((o) => [
    { figure: `${o.agents} agents: records/s`, value: fmt(o.records.per_s), goal: '≥ 200,000' },
    { figure: `${o.agents} agents: interval merges/s`, value: fmt(o.intervals.per_s), goal: '≥ 5,000' },
  ]);
  const largest = out.at(-1);
  return {
    figures: {
      definitions: {
        records_per_s: `request records the coordinator acknowledged per wall second (batches of ${BATCH_ROWS} rows, a few unacknowledged per agent)`,
        intervals_per_s:
          'agent-interval messages (one agent-second, one histogram per metric) merged per wall second, proven by in-order acks',
        per_coordinator_cpu_s: 'the same count per second of coordinator CPU (all its threads, from /proc)',
      },
      phase_s: phaseS,
      fleets: out,
      goal: { records_per_s_min: 200000, interval_merges_per_s_min: 5000, basis: 'per coordinator CPU-second (one core)' },
      goals_met: largest
        ? { records: largest.records.per_coordinator_cpu_s >= 200000, interval_merges: largest.intervals.per_coordinator_cpu_s >= 5000 }
        : null,
    },
    table,
  };
}

/** The coordinator_ingest suite. */
export const coordinatorIngest: Suite = { name: 'coordinator_ingest', run };
