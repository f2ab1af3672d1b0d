// workers: what `agent --workers auto` delivers over `--workers 1` when one thread is the limit.
// The same closed loop (many streams, short token gaps: more chunks than one event loop can take)
// runs through one agent with one thread, then with `--workers auto` — the agent measures itself
// (its self-test) and takes one worker thread per free core it found. Chunks are counted by the
// paced server, per wall second, so the figure is throughput; the machine's cores, its free cores
// just before each run, and the threads auto chose say whether there were cores to scale onto.
import { availableParallelism } from 'node:os';
import { startPacedServer } from './paced-server.js';
import { closedLoopPlan } from './plans.js';
import { machineCpuMs } from './proc.js';
import { runOutcome, runPlan } from './run-plan.js';
import { round3 } from './sampler.js';
import type { BenchContext, Suite, SuiteResult, TableRow } from './suite.js';
import { fmt } from './suite.js';

/** Scaling is near-linear when auto's speed-up is at least this share of its threads. */
const NEAR_LINEAR = 0.75;

/** Busy cores of the whole machine over `ms` before a run: what else (other people's tests) was using it. */
async function busyCoresOver(ms: number): Promise<number> {
  const before = machineCpuMs().busyMs;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  return round3((machineCpuMs().busyMs - before) / (performance.now() - t0));
}

interface WorkersFigures {
  /** As asked: 1 or auto. */
  asked: '1' | 'auto';
  /** The worker threads the agent ran (run.json agents[].workers; auto: its choice). */
  workers: number;
  /** The free cores the agent's self-test found (auto run only; null: the agent did not measure). */
  self_test_free_cores: number | null;
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

/** Whether this run can judge the scaling goal, and why not when it cannot (pure). */
export function scalingJudgeable(
  auto: Pick<WorkersFigures, 'workers' | 'free_cores_before'>,
  quick: boolean,
): { judgeable: true } | { judgeable: false; why: string } {
  if (quick) return { judgeable: false, why: '--quick: too little load to judge' };
  if (auto.workers < 2)
    return {
      judgeable: false,
      why: `--workers auto chose ${auto.workers} thread: the agent found fewer than 2 free cores, so there was nothing to scale onto`,
    };
  // The paced server streams every chunk from the same machine: it needs a core of its own too.
  if (auto.free_cores_before < auto.workers + 1)
    return {
      judgeable: false,
      why: `${auto.workers} threads on ${auto.free_cores_before} free cores before the run: the paced server on this machine needs one more core than the threads to judge their scaling`,
    };
  return { judgeable: true };
}

async function run(ctx: BenchContext): Promise<SuiteResult> {
  const gapMs = 10;
  const load = ctx.quick ? { concurrency: 40, tokens: 32, durationS: 3 } : { concurrency: 800, tokens: 128, durationS: 12 };
  const server = await startPacedServer(gapMs, gapMs);
  const results: WorkersFigures[] = [];
  try {
    for (const asked of ['1', 'auto'] as const) {
      ctx.log(`workers: agent --workers ${asked}, ${load.concurrency} streams × ${load.tokens} tokens, ${gapMs} ms apart`);
      const plan = closedLoopPlan({
        ...load,
        name: `bench-workers-${asked}`,
        baseUrl: server.baseUrl,
        gapMs,
        firstMs: gapMs,
        drainS: 30,
      });
      const freeBefore = round3(Math.max(0, availableParallelism() - (await busyCoresOver(1000))));
      const tokens0 = (await server.stats()).tokens_written;
      const machine0 = machineCpuMs().busyMs;
      const t0 = performance.now();
      // auto measures itself first (--self-test run: its own free cores, not a cached host's).
      const agentArgs = asked === 'auto' ? ['--workers=auto', '--self-test=run'] : ['--workers=1'];
      const result = await runPlan(plan, { agentArgs });
      const wallMs = performance.now() - t0;
      const chunks = (await server.stats()).tokens_written - tokens0;
      const a = result.run.agents[0]!;
      const runMs = Number(result.run.finished_at_unix_ns - result.run.started_at_unix_ns) / 1e6;
      results.push({
        asked,
        workers: a.workers ?? 1,
        self_test_free_cores: a.self_test?.source === 'measured' ? a.self_test.free_cores : null,
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
  const [one, auto] = results as [WorkersFigures, WorkersFigures];
  const speedup = one.chunks_per_s > 0 ? round3(auto.chunks_per_s / one.chunks_per_s) : null;
  const judge = scalingJudgeable(auto, ctx.quick);
  const goalMet = judge.judgeable && speedup !== null ? speedup >= NEAR_LINEAR * auto.workers : null;
  const table: TableRow[] = [
    { figure: 'chunks/s, --workers 1', value: fmt(one.chunks_per_s) },
    { figure: `chunks/s, --workers auto (${auto.workers} thread${auto.workers === 1 ? '' : 's'})`, value: fmt(auto.chunks_per_s) },
    {
      figure: 'speed-up auto vs 1 worker',
      value: `${fmt(speedup, 3)}${judge.judgeable ? '' : ' (not judged)'}`,
      goal: `≥ ${NEAR_LINEAR} × threads while cores are free`,
    },
    {
      figure: 'cores; free before 1 / auto; auto self-test free cores',
      value: `${availableParallelism()}; ${fmt(one.free_cores_before, 2)} / ${fmt(auto.free_cores_before, 2)}; ${fmt(auto.self_test_free_cores, 1)}`,
    },
  ];
  return {
    figures: {
      definitions: {
        chunks_per_s: 'token SSE events the paced server wrote during the run, per second of the run (start instant to last request done)',
        workers:
          'worker threads the agent ran its share on (run.json agents[].workers): 1, or what --workers auto chose — one per free core its self-test found, none below two',
        self_test_free_cores:
          "the free cores (logical CPUs less the 1-minute load average) the auto run's agent measured in its self-test, from which it chose its threads",
        speedup_auto_vs_1: 'chunks_per_s with --workers auto over chunks_per_s with --workers 1; the paced server shares the same cores',
        machine_busy_cores:
          'busy CPU cores of the whole machine meanwhile (2.0 = full on 2 cores): near the cores the server and agent compete',
        cores: 'os.availableParallelism() of the machine',
        free_cores_before: 'cores minus the busy cores of the whole machine in the second before each run (other load on a shared machine)',
        goal_met: `speedup_auto_vs_1 ≥ ${NEAR_LINEAR} × the threads auto chose; null when this run cannot judge it (goal_not_judged_why)`,
      },
      cores: availableParallelism(),
      goal: `near-linear: --workers auto at least ${NEAR_LINEAR} × its threads as fast as --workers 1, where the machine has a free core for each thread and one for the target`,
      goal_met: goalMet,
      goal_not_judged_why: judge.judgeable ? null : judge.why,
      offered_load: { ...load, gap_ms: gapMs },
      workers_1: one,
      workers_auto: auto,
      speedup_auto_vs_1: speedup,
    },
    table,
  };
}

/** The workers suite. */
export const workers: Suite = { name: 'workers', run };
