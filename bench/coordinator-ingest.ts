// coordinator_ingest: what one coordinator absorbs from a fleet of agents. A real coordinator
// (`start --listen … --agents N`) is fed by synthetic agents (synthetic-fleet.ts) in a few
// processes: first record batches as fast as it acknowledges them, then interval histograms.
// Rates are counted from acknowledgements (processed, not merely sent), per wall second and per
// second of the coordinator's own CPU (from /proc).
import type { Plan } from '../shared/plan.js';
import type { Fleet } from './fleet-driver.js';
import { readRun, startFleetRun, stopFleetRun } from './fleet-driver.js';
import { BATCH_ROWS, INTERVAL_METRICS } from './fleet-protocol.js';
import { processCpuMs, rssKib } from './proc.js';
import { round3 } from './sampler.js';
import { sleep } from './spawn.js';
import type { BenchContext, Suite, SuiteResult, TableRow } from './suite.js';
import { fmt } from './suite.js';

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
  const r = await startFleetRun('loadfleet-bench-ingest-', PLAN, agents);
  const { coord, fleets } = r;
  try {
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
    const run = readRun(r.out);
    const intervals = rates(i0, i1, 'intervals');
    return {
      agents,
      fleet_processes: fleets.length,
      join_and_arm_s: round3(r.joinS),
      records: rates(r0, r1, 'records'),
      intervals: { ...intervals, histogram_merges_per_s: intervals.per_s * INTERVAL_METRICS.length },
      histograms_per_interval: INTERVAL_METRICS.length,
      coordinator_peak_rss_mib: round3(peakRss / 1024),
      run_status: run?.status ?? `no run.json (exit ${done.code})`,
      fleet_errors: fleets.flatMap((f) => f.errors).slice(0, 5),
    };
  } finally {
    await stopFleetRun(r);
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
