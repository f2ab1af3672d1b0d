// Runs a plan through the real CLI (`coordinator start --agents N --plan … --quiet`, local agent
// processes) and reads what it wrote. While it runs, a sampler is handed the agents' pids, so a
// suite can read their CPU and memory from /proc at the moments it cares about.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseExact } from '../shared/json.js';
import type { Plan } from '../shared/plan.js';
import { childPids } from './proc.js';
import { sleep, startChild, startNode } from './spawn.js';

/** The parts of run.json the benchmarks read. */
export interface RunView {
  run_id: string;
  status: string;
  status_reason: string | null;
  started_at_unix_ns: bigint;
  finished_at_unix_ns: bigint;
  agents: {
    agent_id: string;
    requests: number;
    completed: number;
    failed: number;
    cpu_ms: number | null;
    schedule_lag_p99_ms: number | null;
    event_loop_delay_p99_ms: number | null;
    /** Worker threads (absent from runs of older coordinators). */
    workers?: number;
    self_test?: { source: 'measured' | 'cached'; free_cores: number } | null;
  }[];
  classes: Record<
    string,
    {
      requests: number;
      completed: number;
      failed: number;
      windows: Record<string, Record<string, unknown>>;
      /** Absent from runs of older coordinators. */
      ttft_uncertainty_p99_ms?: number | null;
    }
  >;
  client_health: { client_limited: boolean; reasons: string[] };
}

/** The parts of a requests.ndjson row the benchmarks read (ns times exact, as bigint). */
export interface RequestRow {
  class: string;
  request_index: number;
  status: string;
  sent_unix_ns: bigint;
  first_content_unix_ns: bigint | null;
  /** A bound on how late first_content may be (absent from older agents' rows). */
  first_content_uncertainty_ns?: number | null;
  done_unix_ns: bigint | null;
  content_chunks: number;
}

/** A finished run. */
export interface PlanResult {
  run: RunView;
  /** Wall time of the whole CLI invocation. */
  wallMs: number;
  requests(): RequestRow[];
  /** Deletes the run directory (some are hundreds of MB). */
  cleanup(): void;
}

/** How to run a plan. */
export interface RunPlanOptions {
  agents?: number;
  /** Extra arguments for every local agent (e.g. `--workers=2`). */
  agentArgs?: string[];
  /** Called every `sampleEveryMs` with the live agent pids (none before they are spawned). */
  onSample?: (agentPids: number[]) => void | Promise<void>;
  sampleEveryMs?: number;
  /** A compiled tree whose coordinator and agent run the plan (default: this one). */
  dist?: string;
}

/** Runs `plan` to completion and parses run.json; throws with the CLI's output if there is none. */
export async function runPlan(plan: Plan, opts: RunPlanOptions = {}): Promise<PlanResult> {
  const root = mkdtempSync(join(tmpdir(), 'loadfleet-bench-'));
  const planPath = join(root, 'plan.json');
  writeFileSync(planPath, JSON.stringify(plan));
  const out = join(root, 'out');
  const t0 = performance.now();
  const args = [
    'start',
    '--agents',
    String(opts.agents ?? 1),
    '--plan',
    planPath,
    '--out',
    out,
    '--quiet',
    // The bench drives agents past their limits on purpose, and measures them its own way.
    '--headroom',
    'warn',
    '--agent-arg=--self-test=skip',
    ...(opts.agentArgs ?? []).map((a) => `--agent-arg=${a}`),
  ];
  const coord = opts.dist
    ? startChild(process.execPath, [join(opts.dist, 'coordinator/main.js'), ...args])
    : startNode('coordinator/main.js', args);
  let running = true;
  const sampling = (async () => {
    while (running) {
      if (opts.onSample) await opts.onSample(childPids(coord.pid, 'agent/main.js'));
      await sleep(opts.sampleEveryMs ?? 100);
    }
  })();
  const done = await coord.exited;
  running = false;
  await sampling;
  const wallMs = performance.now() - t0;
  let dir: string;
  let run: RunView;
  try {
    dir = join(out, readdirSync(out)[0]!);
    run = parseExact<RunView>(readFileSync(join(dir, 'run.json'), 'utf8'));
  } catch {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`coordinator exited ${done.code} without a run.json:\n${done.stdout}\n${done.stderr.slice(-3000)}`);
  }
  return {
    run,
    wallMs,
    requests: () => readRequests(join(dir, 'requests.ndjson')),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

function readRequests(path: string): RequestRow[] {
  const rows: RequestRow[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) if (line) rows.push(parseExact<RequestRow>(line));
  return rows;
}

/** The one class's figures in window `all` (every benchmark plan has one class, `bench`). */
export function allWindow(run: RunView): Record<string, unknown> {
  return run.classes.bench?.windows.all ?? {};
}

/** The run's status and why, for a figure to carry (a degraded or aborted run explains odd numbers). */
export function runOutcome(run: RunView): { run_status: string; status_reason: string | null } {
  return { run_status: run.status, status_reason: run.status_reason };
}
