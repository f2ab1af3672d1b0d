// coordinator_memory: how much memory one coordinator needs for a long run. A real coordinator is
// fed a whole open-loop run of distinct requests (1,000,000 by default) by synthetic agents
// (synthetic-fleet.ts, stream mode): every record, each agent's per-second interval histograms and
// its final run histograms, as real agents send them, as fast as the coordinator acknowledges.
// The figure is the coordinator's peak resident set (VmHWM) from first byte to exit, run.json
// and report.html included, at 1M and 10M requests; their difference per request is the slope, what
// a longer run costs. The exact figures it wrote are kept so two builds can be compared.
import { MAX_IN_MEMORY_ENV } from '../coordinator/exact-store.js';
import type { Plan } from '../shared/plan.js';
import { readRun, startFleetRun, stopFleetRun } from './fleet-driver.js';
import { peakRssKib } from './proc.js';
import { round3 } from './sampler.js';
import type { BenchContext, Suite, SuiteResult, TableRow } from './suite.js';
import { fmt } from './suite.js';

const CLASS = 'bench';
/** The goal: a 1M-request run keeps the coordinator under 1 GB. */
const GOAL_MIB = 1024;

/** A run's size: requests, their intended rate, and the synthetic agents that send them. */
export interface Size {
  requests: number;
  ratePerS: number;
  agents: number;
}

/**
 * The goal: each further request costs the coordinator at most this many bytes, so a
 * day-long run fits: the plan's schedule (8 bytes per arrival) and a few bits of bookkeeping.
 */
const GOAL_BYTES_PER_REQUEST = 16;

const FULL: Size = { requests: 1_000_000, ratePerS: 5000, agents: 10 };
/** The two sizes whose difference gives the slope: 1M and 10M requests. */
const FULL_POINTS: Size[] = [FULL, { ...FULL, requests: 10_000_000 }];
/** The --quick size, also the size of the spill check (in memory vs through the spill file). */
export const QUICK: Size = { requests: 2000, ratePerS: 1000, agents: 2 };
/** --quick: two tiny runs, enough to exercise the slope, too small to judge it. */
const QUICK_POINTS: Size[] = [QUICK, { ...QUICK, requests: 4000 }];

// The coordinator never contacts the target; the plan gives the run its schedule, windows and SLO.
function plan(s: Size): Plan {
  const durationS = Math.ceil(s.requests / s.ratePerS);
  return {
    schema: 'loadfleet.plan/v1',
    name: 'bench-memory',
    seed: 1,
    duration_s: durationS,
    drain_timeout_s: 0,
    target: { base_url: 'http://127.0.0.1:9/v1', api: 'chat', model: 'none', timeout_s: 10 },
    classes: [
      {
        name: CLASS,
        prompt: { input_tokens: 16, output_tokens: 128 },
        load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: durationS, rate_per_s: s.ratePerS }] },
        slo: { ttft_p95_ms: 150, tpot_p95_ms: 25, e2e_p95_ms: 3000, success_rate_min: 0.95 },
      },
    ],
    windows: [
      { name: 'warmup', start_s: 0, end_s: durationS / 10 },
      { name: 'steady', start_s: durationS / 10, end_s: (durationS * 9) / 10 },
    ],
  };
}

/** The parts of run.json this suite reads. */
interface RunView {
  status?: string;
  status_reason?: string | null;
  events?: string[];
  classes?: Record<
    string,
    { requests?: number; slo_verdict?: { windows?: Record<string, { criteria: { criterion: string; figure: number | null }[] }> } }
  >;
  histograms?: { max_relative_error_vs_exact?: number; compared_values?: number; exact_method?: string; exact_passes?: number };
  data_quality?: { checks?: { name: string; evidence?: { classes?: Record<string, unknown> } }[] };
}

/** The figures of run.json computed from every raw value exactly: what a change of the exact method must keep. */
export function exactFigures(run: RunView | null): Record<string, unknown> {
  const verdicts = run?.classes?.[CLASS]?.slo_verdict?.windows ?? {};
  return {
    slo_verdict_figures: Object.fromEntries(Object.entries(verdicts).map(([w, v]) => [w, v.criteria.map((c) => [c.criterion, c.figure])])),
    max_relative_error_vs_exact: run?.histograms?.max_relative_error_vs_exact ?? null,
    compared_values: run?.histograms?.compared_values ?? null,
    schedule_kept: run?.data_quality?.checks?.find((c) => c.name === 'schedule_kept')?.evidence?.classes?.[CLASS] ?? null,
  };
}

/** What a run that ended early says about why: its status, reason and events, or the coordinator's last words. */
function whyEnded(run: RunView | null, stderr: string): string {
  if (!run) return `no run.json; ${stderr.slice(-1000)}`;
  return [run.status, run.status_reason, ...(run.events ?? []).slice(-5)].filter((s) => s).join('; ');
}

/** One run of `s` through a real coordinator (its environment extended by `env`): peak RSS, times, exact figures. */
export async function measure(s: Size, env: Record<string, string> = {}) {
  const p = plan(s);
  const r = await startFleetRun('loadfleet-bench-memory-', p, s.agents, env);
  const { coord, fleets } = r;
  try {
    let peakKib = 0;
    const timer = setInterval(() => {
      peakKib = Math.max(peakKib, peakRssKib(coord.pid) ?? 0);
    }, 100);
    const t0 = performance.now();
    for (const f of fleets)
      f.command({ cmd: 'stream', requests: s.requests, agents: s.agents, rate_per_s: s.ratePerS, class: CLASS, windows: p.windows! });
    // A run that ends early (an agent lost, say) never has every record acknowledged: stop waiting then.
    const streamed = await Promise.race([
      Promise.all(fleets.map((f) => f.streamed)),
      coord.exited.then((d) => {
        throw new Error(
          `the coordinator exited (${d.code}) before every record was acknowledged: ${whyEnded(readRun<RunView>(r.out), d.stderr)}`,
        );
      }),
    ]);
    const ingestS = (performance.now() - t0) / 1000;
    const peakAtIngestKib = Math.max(peakKib, peakRssKib(coord.pid) ?? 0);
    // VmHWM only grows: the last reading before the exit holds the peak of everything before it.
    const done = await coord.exited;
    clearInterval(timer);
    const totalS = (performance.now() - t0) / 1000;
    const run = readRun<RunView>(r.out);
    return {
      requests: s.requests,
      records_sent: streamed.reduce((n, e) => n + e.records, 0),
      records_in_run_json: run?.classes?.[CLASS]?.requests ?? null,
      agents: s.agents,
      rate_per_s: s.ratePerS,
      windows: (p.windows ?? []).length + 1,
      ingest_s: round3(ingestS),
      summarize_s: round3(totalS - ingestS),
      total_s: round3(totalS),
      peak_rss_after_ingest_mib: round3(peakAtIngestKib / 1024),
      coordinator_peak_rss_mib: round3(peakKib / 1024),
      run_status: run?.status ?? `no run.json (exit ${done.code}): ${done.stderr.slice(-500)}`,
      exact_method: run?.histograms?.exact_method ?? null,
      exact_passes: run?.histograms?.exact_passes ?? null,
      exact_figures: exactFigures(run),
      fleet_errors: fleets.flatMap((f) => f.errors).slice(0, 5),
    };
  } finally {
    await stopFleetRun(r);
  }
}

/** Bytes of coordinator peak RSS per request between two run sizes: the growth a longer run adds. */
export function slopeBytesPerRequest(a: { requests: number; coordinator_peak_rss_mib: number }, b: typeof a): number {
  return round3(((b.coordinator_peak_rss_mib - a.coordinator_peak_rss_mib) * 1024 * 1024) / (b.requests - a.requests));
}

async function run(ctx: BenchContext): Promise<SuiteResult> {
  const sizes = ctx.quick ? QUICK_POINTS : FULL_POINTS;
  const points = [];
  for (const size of sizes) {
    ctx.log(`coordinator_memory: ${size.requests} requests from ${size.agents} synthetic agents`);
    points.push(await measure(size));
  }
  const [small, large] = points as [Awaited<ReturnType<typeof measure>>, Awaited<ReturnType<typeof measure>>];
  const slope = slopeBytesPerRequest(small, large);
  // The same small run twice, in memory and spilled from the first value: the exact figures must not move.
  ctx.log(`coordinator_memory: spill check, ${QUICK.requests} requests in memory and spilled`);
  const inMemory = ctx.quick ? small : await measure(QUICK);
  const spilled = await measure(QUICK, { [MAX_IN_MEMORY_ENV]: '0' });
  const spillCheck = {
    methods: [inMemory.exact_method, spilled.exact_method],
    spill_passes: spilled.exact_passes,
    identical: JSON.stringify(inMemory.exact_figures) === JSON.stringify(spilled.exact_figures),
  };
  const table: TableRow[] = [
    ...points.map((m) => ({
      figure: `${fmt(m.requests)} requests: coordinator peak RSS; ingest + summarize`,
      value: `${fmt(m.coordinator_peak_rss_mib)} MiB; ${fmt(m.ingest_s, 1)} + ${fmt(m.summarize_s, 1)} s`,
      ...(m.requests === FULL.requests && { goal: `< ${fmt(GOAL_MIB)} MiB` }),
    })),
    {
      figure: `coordinator memory per request (${fmt(small.requests)} → ${fmt(large.requests)} requests)`,
      value: `${fmt(slope, 1)} bytes`,
      goal: `≤ ${GOAL_BYTES_PER_REQUEST} bytes`,
    },
    { figure: 'exact figures spilled = in memory', value: String(spillCheck.identical), goal: 'true' },
  ];
  const full = !ctx.quick;
  return {
    figures: {
      definitions: {
        coordinator_peak_rss_mib:
          'the coordinator process peak resident set (VmHWM in /proc/<pid>/status, read every 100 ms until it exits), from its start to its exit after run.json and report.html',
        peak_rss_after_ingest_mib: 'the same peak as soon as every record was acknowledged and every agent had sent its final',
        ingest_s: 'wall seconds from the stream command until every agent had every record acknowledged and had sent its final',
        summarize_s: 'wall seconds from then until the coordinator exited (run.json, the other artifacts and report.html written)',
        slope_bytes_per_request:
          '(peak RSS of the larger run − peak RSS of the smaller) ÷ (their difference in requests): what each further request of a run costs the coordinator, the plan’s own schedule (one 8-byte arrival time per request) and the exact figures’ in-memory values (bounded, then spilled) included',
        exact_figures:
          'the figures run.json computes from every raw value, exactly (SLO verdict p95s, the histograms error against exact, schedule lag p99 and max), for comparing two builds',
        spill_check: `a ${QUICK.requests}-request run twice, its raw values held in memory and spilled from the first (${MAX_IN_MEMORY_ENV}=0); identical when every exact figure of run.json is the same`,
      },
      run: points.find((m) => m.requests === FULL.requests) ?? small,
      runs: points,
      slope_bytes_per_request: slope,
      spill_check: spillCheck,
      goal: {
        coordinator_peak_rss_mib_max: GOAL_MIB,
        requests: FULL.requests,
        slope_bytes_per_request_max: GOAL_BYTES_PER_REQUEST,
        slope_between: FULL_POINTS.map((p) => p.requests),
      },
      goal_met: full ? small.coordinator_peak_rss_mib < GOAL_MIB && slope <= GOAL_BYTES_PER_REQUEST : null,
    },
    table,
  };
}

/** The coordinator_memory suite. */
export const coordinatorMemory: Suite = { name: 'coordinator_memory', run };
