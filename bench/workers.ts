// workers: what `agent --workers 1|2` delivers when one thread is the limit. The same closed loop
// (many streams, short token gaps: more chunks than one event loop can take) runs through one
// agent with one and then two worker threads; chunks are counted by the paced server, per wall
// second, so the figure is throughput, and the machine's busy cores say how full the box was.
import { availableParallelism } from 'node:os';
import { startPacedServer } from './paced-server.js';
import { closedLoopPlan } from './plans.js';
import { machineCpuMs } from './proc.js';
import { runOutcome, runPlan } from './run-plan.js';
import { round3 } from './sampler.js';
import type { BenchContext, Suite, SuiteResult, TableRow } from './suite.js';
import { fmt } from './suite.js';

/** Busy cores of the whole machine over `ms` before a run: what else (other people's tests) was using it. */
async function busyCoresOver(ms: number): Promise<number> {
  const before = machineCpuMs().busyMs;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  return round3((machineCpuMs().busyMs - before) / (performance.now() - t0));
}

interface WorkersFigures {
  workers: number;
  chunks: number;
  chunks_per_s: number;
  agent_cpu_ms: number | null;
  schedule_lag_p99_ms: number | null;
  event_loop_delay_p99_ms: number | null;
  machine_busy_cores: number;
  /** The machine's cores minus its busy cores in the second before the run (the paced server idles then). */
  free_cores_before: number;
  run_status: string;
  status_reason: string | null;
}

async function run(ctx: BenchContext): Promise<SuiteResult> {
  const gapMs = 10;
  const load = ctx.quick ? { concurrency: 40, tokens: 32, durationS: 3 } : { concurrency: 800, tokens: 128, durationS: 12 };
  const server = await startPacedServer(gapMs, gapMs);
  const results: WorkersFigures[] = [];
  try {
    for (const workers of [1, 2]) {
      ctx.log(`workers: agent --workers ${workers}, ${load.concurrency} streams × ${load.tokens} tokens, ${gapMs} ms apart`);
      const plan = closedLoopPlan({
        ...load,
        name: `bench-workers-${workers}`,
        baseUrl: server.baseUrl,
        gapMs,
        firstMs: gapMs,
        drainS: 30,
      });
      const freeBefore = round3(Math.max(0, availableParallelism() - (await busyCoresOver(1000))));
      const tokens0 = (await server.stats()).tokens_written;
      const machine0 = machineCpuMs().busyMs;
      const t0 = performance.now();
      const result = await runPlan(plan, { agentArgs: [`--workers=${workers}`] });
      const wallMs = performance.now() - t0;
      const chunks = (await server.stats()).tokens_written - tokens0;
      const a = result.run.agents[0]!;
      const runMs = Number(result.run.finished_at_unix_ns - result.run.started_at_unix_ns) / 1e6;
      results.push({
        workers,
        chunks,
        chunks_per_s: Math.round(chunks / (runMs / 1000)),
        agent_cpu_ms: a.cpu_ms,
        schedule_lag_p99_ms: a.schedule_lag_p99_ms,
        event_loop_delay_p99_ms: a.event_loop_delay_p99_ms,
        machine_busy_cores: round3((machineCpuMs().busyMs - machine0) / wallMs),
        free_cores_before: freeBefore,
        ...runOutcome(result.run),
      });
      result.cleanup();
    }
  } finally {
    await server.stop();
  }
  const [one, two] = results as [WorkersFigures, WorkersFigures];
  const speedup = one.chunks_per_s > 0 ? round3(two.chunks_per_s / one.chunks_per_s) : null;
  const table: TableRow[] = [
    { figure: 'chunks/s, --workers 1', value: fmt(one.chunks_per_s) },
    { figure: 'chunks/s, --workers 2', value: fmt(two.chunks_per_s) },
    { figure: 'speed-up 2 vs 1 worker', value: fmt(speedup, 3), goal: 'near-linear while cores are free' },
    {
      figure: 'cores; free before --workers 1 / 2',
      value: `${availableParallelism()}; ${fmt(one.free_cores_before, 2)} / ${fmt(two.free_cores_before, 2)}`,
    },
  ];
  return {
    figures: {
      definitions: {
        chunks_per_s: 'token SSE events the paced server wrote during the run, per second of the run (start instant to last request done)',
        speedup_2_vs_1: 'chunks_per_s with two worker threads over chunks_per_s with one; the paced server shares the same cores',
        machine_busy_cores: 'busy CPU cores of the whole machine meanwhile (2.0 = full): near 2 the server and agent compete',
        cores: 'os.availableParallelism() of the machine',
        free_cores_before: 'cores minus the busy cores of the whole machine in the second before each run (other load on a shared machine)',
      },
      cores: availableParallelism(),
      // Why the agent's default stays --workers 1 where this suite runs (docs/performance.md).
      default_workers_note:
        'a second worker needs a core nobody else uses: the paced server takes one of the two cores here and the main thread relays every record batch and merges every second, so on 2 cores --workers 2 costs more than it gains and the default stays 1',
      offered_load: { ...load, gap_ms: gapMs },
      workers_1: one,
      workers_2: two,
      speedup_2_vs_1: speedup,
    },
    table,
  };
}

/** The workers suite. */
export const workers: Suite = { name: 'workers', run };
