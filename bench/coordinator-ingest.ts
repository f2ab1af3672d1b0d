// coordinator_ingest: what one coordinator absorbs from a fleet of agents. A real coordinator
// (`start --listen … --agents N`) is fed by synthetic agents (synthetic-fleet.ts) in a few
// processes: first record batches as fast as it acknowledges them, then interval histograms.
// Rates are counted from acknowledgements (processed, not merely sent), per wall second and per
// second of the coordinator's own CPU (from /proc). Before those, the fleet is paced as real
// agents are (pacedPhase): each second's interval and records at its end, all the fleet's
// records or a sample of them, and the merge lag measured from each second's end. At the first
// size the same build runs again without its journal (acknowledgements volatile: taken, not yet on
// disk), so the price of durable acknowledgements is read in one invocation: `durable_vs_volatile`,
// and the record batches' wait for their acknowledgements (p50, p99) on both sides.

import { APPENDED_JOURNAL_ENV, VOLATILE_ACKS_ENV } from '../coordinator/run/durable.js';
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
  duration_s: 600,
  drain_timeout_s: 0,
  target: { base_url: 'http://127.0.0.1:9/v1', api: 'chat', model: 'none', timeout_s: 10 },
  classes: [
    {
      name: 'bench',
      prompt: { input_tokens: 16, output_tokens: 128 },
      load: { model: 'concurrency', phases: [{ start_s: 0, duration_s: 600, concurrency: 1 }] },
    },
  ],
};

interface Mark {
  ms: number;
  cpuMs: number;
  records: number;
  intervals: number;
  /** Each record batch's wait for its acknowledgement (ms) since the previous mark, all fleets. */
  ackWaitsMs: number[];
}

async function mark(coordPid: number, fleets: readonly Fleet[]): Promise<Mark> {
  const reports = await Promise.all(fleets.map((f) => f.report()));
  return {
    ms: performance.now(),
    cpuMs: processCpuMs(coordPid) ?? Number.NaN,
    records: reports.reduce((n, r) => n + r.records_acked, 0),
    intervals: reports.reduce((n, r) => n + r.intervals_acked, 0),
    ackWaitsMs: reports.flatMap((r) => r.ack_waits_ms),
  };
}

/** p50 and p99 of the record batches' acknowledgement waits between two marks (the later one's). */
function ackWait(b: Mark) {
  return {
    batches: b.ackWaitsMs.length,
    p50: round3(quantile(b.ackWaitsMs, 0.5) ?? Number.NaN),
    p99: round3(quantile(b.ackWaitsMs, 0.99) ?? Number.NaN),
  };
}

function rates(a: Mark, b: Mark, field: 'records' | 'intervals') {
  const wallS = (b.ms - a.ms) / 1000;
  const cpuS = (b.cpuMs - a.cpuMs) / 1000;
  const n = b[field] - a[field];
  return { per_s: Math.round(n / wallS), per_coordinator_cpu_s: Math.round(n / cpuS), coordinator_cpu_utilisation: round3(cpuS / wallS) };
}

/** Requests per agent-second in the paced phases (every one sent, or every SAMPLE_EVERY-th). */
const PACED_RECORDS_PER_AGENT_S = 10;
/** The sample the histogram-only phase sends: every SAMPLE_EVERY-th request of each agent. */
const SAMPLE_EVERY = 100;
/** Seconds after the last paced second the bench waits for its merges (a second not merged by then is counted as such). */
const MERGE_WAIT_S = 15;
/** The merge lag bound a fleet size must keep (p99 over the paced seconds) to count as held. */
const MERGE_LAG_BOUND_MS = 1000;

/** The nearest-rank quantile of a few values (null when there are none). */
function quantile(xs: readonly number[], q: number): number | null {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * One paced phase: `seconds` wall-clock seconds in which every agent sends, at each second's end,
 * its interval and its records of that second (all, or every sampleEvery-th); then the merge lag
 * of each second — from its end to the ack of the last agent's interval for it, the moment the
 * coordinator has every agent's interval for it and closes it — and what the coordinator spent.
 */
async function pacedPhase(
  coordPid: number,
  fleets: readonly Fleet[],
  agents: number,
  firstSecond: number,
  seconds: number,
  sampleEvery: number,
) {
  const start = Math.ceil((Date.now() + 1500) / 1000) * 1000;
  for (const f of fleets)
    f.command({
      cmd: 'paced',
      start_epoch_ms: start,
      seconds,
      first_second: firstSecond,
      fleet_agents: agents,
      records_per_agent_s: PACED_RECORDS_PER_AGENT_S,
      sample_every: sampleEvery,
    });
  await sleep(Math.max(0, start - Date.now()));
  const cpu0 = processCpuMs(coordPid) ?? Number.NaN;
  // The last second ends at start + seconds; the merges are waited for up to MERGE_WAIT_S more,
  // so a lag past the bound is still measured (a backlog that never drains is not).
  await sleep(seconds * 1000);
  let reports = await Promise.all(fleets.map((f) => f.pacedReport()));
  const allAcked = (): boolean =>
    Array.from({ length: seconds }, (_, k) => reports.reduce((n, r) => n + (r.seconds[firstSecond + k]?.acked ?? 0), 0)).every(
      (n) => n >= agents,
    );
  for (let waited = 0; waited < MERGE_WAIT_S && !allAcked(); waited++) {
    await sleep(1000);
    reports = await Promise.all(fleets.map((f) => f.pacedReport()));
  }
  const wallS = (Date.now() - start) / 1000;
  const cpu1 = processCpuMs(coordPid) ?? Number.NaN;
  const lags: number[] = [];
  const sendDelays: number[] = [];
  let unmerged = 0;
  let rows = 0;
  for (let k = 0; k < seconds; k++) {
    const end = start + (k + 1) * 1000;
    const per = reports.map((r) => r.seconds[firstSecond + k]);
    const acked = per.reduce((n, p) => n + (p?.acked ?? 0), 0);
    rows += per.reduce((n, p) => n + (p?.rows ?? 0), 0);
    sendDelays.push(Math.max(...per.map((p) => (p ? p.last_send_ms - end : Number.NaN))));
    if (acked < agents) unmerged++;
    else lags.push(Math.max(...per.map((p) => p!.last_ack_ms)) - end);
  }
  return {
    sample_every: sampleEvery,
    seconds,
    records_per_s: Math.round(rows / seconds),
    interval_merges_per_s: agents,
    merge_lag_ms: {
      p50: round3(quantile(lags, 0.5) ?? Number.NaN),
      p99: round3(quantile(lags, 0.99) ?? Number.NaN),
      max: round3(Math.max(...lags)),
    },
    send_delay_ms_max: round3(Math.max(...sendDelays)),
    seconds_not_merged: unmerged,
    coordinator_cpu_utilisation: round3((cpu1 - cpu0) / 1000 / wallS),
    // What each agent-second cost the coordinator, and so how many agents one free core could merge
    // in real time (a bound above the merge-lag limit: the work of a second arrives all at once).
    coordinator_cpu_ms_per_agent_second: round3((cpu1 - cpu0) / (seconds * agents)),
    agents_per_free_core: Math.round((seconds * agents * 1000) / (cpu1 - cpu0)),
    merge_lag_held: unmerged === 0 && (quantile(lags, 0.99) ?? Number.POSITIVE_INFINITY) <= MERGE_LAG_BOUND_MS,
    wall_s: round3(wallS),
  };
}

/** Fleet size and rounds of the durable / volatile / appended comparison. */
const COMPARE_AGENTS = 10;
const COMPARE_ROUNDS = 3;

interface FloodRun {
  acks: Acks;
  round: number;
  per_s: number;
  per_coordinator_cpu_s: number;
  ack_p50: number;
  ack_p99: number;
}

/** One coordinator of the given kind, flooded with records for `seconds` after 1 s of warm-up. */
async function floodOnce(agents: number, seconds: number, acks: Acks, round: number): Promise<FloodRun> {
  const r = await startFleetRun('loadfleet-bench-acks-', PLAN, agents, ACKS_ENV[acks]);
  try {
    await sleep(500);
    for (const f of r.fleets) f.command({ cmd: 'records' });
    await sleep(1000);
    const a = await mark(r.coord.pid, r.fleets);
    await sleep(seconds * 1000);
    const b = await mark(r.coord.pid, r.fleets);
    const rt = rates(a, b, 'records');
    const w = ackWait(b);
    return { acks, round, per_s: rt.per_s, per_coordinator_cpu_s: rt.per_coordinator_cpu_s, ack_p50: w.p50, ack_p99: w.p99 };
  } finally {
    await stopFleetRun(r);
  }
}

/**
 * The same build with its journal, with the journal appended as before its segments, and without
 * one, `rounds` times in a rotated order (a noisy machine drifts between runs; medians compared).
 */
async function compareAcks(ctx: BenchContext, agents: number, seconds: number, rounds: number) {
  const kinds: Acks[] = ['durable', 'volatile', 'appended'];
  const runs: (FloodRun | { acks: Acks; round: number; error: string })[] = [];
  for (let round = 0; round < rounds; round++)
    for (let k = 0; k < kinds.length; k++) {
      const acks = kinds[(k + round) % kinds.length]!;
      const o = await floodOnce(agents, seconds, acks, round).catch((err: Error) => ({ acks, round, error: err.message.slice(0, 500) }));
      ctx.log(`coordinator_ingest: acks compared, ${JSON.stringify(o)}`);
      runs.push(o);
    }
  const ok = (acks: Acks): FloodRun[] => runs.filter((o): o is FloodRun => o.acks === acks && !('error' in o));
  const med = (xs: number[]): number => quantile(xs, 0.5) ?? Number.NaN;
  const median = (acks: Acks) => {
    const rs = ok(acks);
    if (rs.length === 0) return null;
    return {
      per_s: med(rs.map((o) => o.per_s)),
      per_coordinator_cpu_s: med(rs.map((o) => o.per_coordinator_cpu_s)),
      ack_p50: med(rs.map((o) => o.ack_p50)),
      ack_p99: med(rs.map((o) => o.ack_p99)),
    };
  };
  const ratio = (acks: Acks, field: 'per_s' | 'per_coordinator_cpu_s'): number | null => {
    const d = median(acks)?.[field];
    const v = median('volatile')?.[field];
    return d && v ? round3(d / v) : null;
  };
  return { runs, median, ratio };
}

/** Waits for the coordinator to exit, at most `ms`; false when it did not. */
async function exitedWithin(coord: { exited: Promise<unknown> }, ms: number): Promise<boolean> {
  return Promise.race([coord.exited.then(() => true), sleep(ms).then(() => false)]);
}

/**
 * One fleet size: the paced phases (the sample, then every record unless the sample already fell
 * behind), and at the first size only the flooded phases (throughput per CPU-second: past the
 * limit a flood only measures the backlog, and takes minutes to drain).
 */
/** How the coordinator acknowledges: its journal (preallocated segments), the journal appended as before them, or no journal. */
type Acks = 'durable' | 'appended' | 'volatile';
const ACKS_ENV: Record<Acks, Record<string, string>> = {
  durable: {},
  appended: { [APPENDED_JOURNAL_ENV]: '1' },
  volatile: { [VOLATILE_ACKS_ENV]: '1' },
};
const ACKS_SAID: Record<Acks, string> = {
  durable: 'durable (journal in preallocated segments, fdatasync)',
  appended: 'durable, the journal appended to one file with a 2 ms group deadline (as before its preallocated segments)',
  volatile: 'volatile (no journal)',
};

async function measure(agents: number, phaseS: number, pacedS: number, flood: boolean, acks: Acks = 'durable') {
  const r = await startFleetRun('loadfleet-bench-ingest-', PLAN, agents, ACKS_ENV[acks]);
  const { coord, fleets } = r;
  try {
    // The fleet runs at the coordinator's priority: niced 5 more, on this shared machine a fleet
    // process went unscheduled long enough to miss the coordinator's pings, and its agent was dropped.
    await sleep(1000);
    let peakRss = 0;
    const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, rssKib(coord.pid) ?? 0)), 200);
    // The sample first: what the all-records phase leaves behind at a size past the limit would
    // otherwise be in the sample's figures.
    const sampled = await pacedPhase(coord.pid, fleets, agents, 0, pacedS, SAMPLE_EVERY);
    const paced = sampled.merge_lag_held ? await pacedPhase(coord.pid, fleets, agents, pacedS, pacedS, 1) : null;
    let records: ReturnType<typeof rates> | null = null;
    let intervals: ReturnType<typeof rates> | null = null;
    let recordsAckWait: ReturnType<typeof ackWait> | null = null;
    if (flood) {
      // Intervals flooded before records: a records flood can leave the coordinator seconds behind
      // its links (their pongs queue behind the data), drop an agent as silent and end the run.
      for (const f of fleets) f.command({ cmd: 'intervals' });
      const i0 = await mark(coord.pid, fleets);
      await sleep(phaseS * 1000);
      const i1 = await mark(coord.pid, fleets);
      for (const f of fleets) f.command({ cmd: 'records' });
      await sleep(1000); // let the interval batches still in flight drain
      const r0 = await mark(coord.pid, fleets);
      await sleep(phaseS * 1000);
      const r1 = await mark(coord.pid, fleets);
      intervals = rates(i0, i1, 'intervals');
      records = rates(r0, r1, 'records');
      recordsAckWait = ackWait(r1);
    }
    clearInterval(rssTimer);
    for (const f of fleets) f.command({ cmd: 'final' });
    const finished = await exitedWithin(coord, 30_000);
    const run = finished ? readRun<{ status: string; status_reason: string | null }>(r.out) : null;
    return {
      agents,
      acknowledgements: ACKS_SAID[acks],
      fleet_processes: fleets.length,
      join_and_arm_s: round3(r.joinS),
      paced_sampled_records: sampled,
      paced_all_records: paced ?? 'skipped: the sampled phase already fell behind',
      records,
      records_ack_wait_ms: recordsAckWait,
      intervals: intervals && { ...intervals, histogram_merges_per_s: intervals.per_s * INTERVAL_METRICS.length },
      histograms_per_interval: INTERVAL_METRICS.length,
      coordinator_peak_rss_mib: round3(peakRss / 1024),
      run_status: finished ? (run?.status ?? 'no run.json') : 'not written within 30 s of the finals (its backlog)',
      run_status_reason: run?.status_reason?.slice(0, 300) ?? null,
      fleet_errors: fleets.flatMap((f) => f.errors).slice(0, 5),
    };
  } finally {
    await stopFleetRun(r);
  }
}

type Measured = Awaited<ReturnType<typeof measure>>;
type SizeResult = Measured | { agents: number; error: string };

function measured(o: SizeResult): o is Measured {
  return !('error' in o);
}

/** The largest fleet size whose paced phase (all records, or sampled) kept the merge lag within its bound. */
function limit(out: readonly SizeResult[], phase: 'paced_all_records' | 'paced_sampled_records'): number | null {
  const held = out.filter(measured).filter((o) => {
    const p = o[phase];
    return typeof p === 'object' && p.merge_lag_held;
  });
  return held.length > 0 ? Math.max(...held.map((o) => o.agents)) : null;
}

async function run(ctx: BenchContext): Promise<SuiteResult> {
  const sizes = ctx.quick ? [10, 40] : [1000, 5000, 10000];
  const phaseS = ctx.quick ? 1 : 3;
  const compareS = ctx.quick ? 2 : 4;
  const pacedS = ctx.quick ? 2 : 8;
  const out: SizeResult[] = [];
  for (const n of sizes) {
    ctx.log(`coordinator_ingest: ${n} synthetic agents`);
    // A size that fails (the join is the first wall) is a figure of its own, not the suite's end.
    const o: SizeResult = await measure(n, phaseS, pacedS, n === sizes[0]).catch((err: Error) => ({
      agents: n,
      error: err.message.slice(0, 1500),
    }));
    ctx.log(`coordinator_ingest: ${n} agents: ${JSON.stringify(o)}`);
    out.push(o);
  }
  // The same build without the journal, and with it appended as before its segments: what durable
  // acknowledgements cost, and what the segments changed.
  // A quick run (the CI smoke) compares once: its figures are not judged, only their shape.
  const cmp = await compareAcks(ctx, COMPARE_AGENTS, compareS, ctx.quick ? 1 : COMPARE_ROUNDS);
  const durableVsVolatile = cmp.ratio('durable', 'per_s');
  const durableVsVolatileCpu = cmp.ratio('durable', 'per_coordinator_cpu_s');
  const appendedVsVolatile = cmp.ratio('appended', 'per_s');
  const waitRow = (acks: Acks): string => {
    const w = cmp.median(acks);
    return w ? `${fmt(w.ack_p50, 1)} / ${fmt(w.ack_p99, 1)} ms` : 'n/a';
  };
  const lagP99 = (p: Measured['paced_all_records']): string => (typeof p === 'object' ? fmt(p.merge_lag_ms.p99) : 'skipped');
  const table: TableRow[] = out.flatMap((o): TableRow[] =>
    measured(o)
      ? [
          { figure: `${o.agents} agents: join and arm`, value: `${fmt(o.join_and_arm_s, 1)} s` },
          {
            figure: `${o.agents} agents: merge lag p99, 1 in ${SAMPLE_EVERY} records / all`,
            value: `${lagP99(o.paced_sampled_records)} / ${lagP99(o.paced_all_records)} ms`,
            goal: `≤ ${fmt(MERGE_LAG_BOUND_MS)} ms`,
          },
          ...(o.records && o.intervals
            ? [
                { figure: `${o.agents} agents: records/s (flooded)`, value: fmt(o.records.per_s), goal: '≥ 200,000 per CPU-s' },
                { figure: `${o.agents} agents: interval merges/s (flooded)`, value: fmt(o.intervals.per_s), goal: '≥ 5,000 per CPU-s' },
              ]
            : []),
          { figure: `${o.agents} agents: coordinator peak RSS`, value: `${fmt(o.coordinator_peak_rss_mib)} MiB` },
        ]
      : [{ figure: `${o.agents} agents`, value: `error: ${o.error.split('\n')[0]!.slice(0, 80)}` }],
  );
  const first = out.find(measured);
  table.push(
    {
      figure: `${COMPARE_AGENTS} agents: records/s flooded, durable vs volatile acks (medians of ${COMPARE_ROUNDS})`,
      value: `${fmt(durableVsVolatile, 2)}× (${fmt(cmp.median('durable')?.per_s)} vs ${fmt(cmp.median('volatile')?.per_s)}; per CPU-s ${fmt(durableVsVolatileCpu, 2)}×)`,
      goal: '≥ 0.9×',
    },
    {
      figure: `${COMPARE_AGENTS} agents: … the journal appended, as before its segments`,
      value: `${fmt(appendedVsVolatile, 2)}× (${fmt(cmp.median('appended')?.per_s)})`,
    },
    { figure: `${COMPARE_AGENTS} agents: record batch ack wait p50 / p99, durable`, value: waitRow('durable') },
    { figure: `${COMPARE_AGENTS} agents: … appended`, value: waitRow('appended') },
    { figure: `${COMPARE_AGENTS} agents: … volatile`, value: waitRow('volatile') },
  );
  const limitAll = limit(out, 'paced_all_records');
  const limitSampled = limit(out, 'paced_sampled_records');
  const largest = Math.max(...sizes);
  return {
    figures: {
      definitions: {
        records_per_s: `request records the coordinator acknowledged per wall second while flooded (batches of ${BATCH_ROWS} rows, a few unacknowledged per agent, every row a request_index the agent had not sent before)`,
        intervals_per_s:
          'agent-interval messages (one agent-second, one histogram per metric) merged per wall second while flooded, proven by in-order acks',
        per_coordinator_cpu_s: 'the same count per second of coordinator CPU (all its threads, from /proc)',
        join_and_arm_s: 'seconds from starting the coordinator until every synthetic agent had joined, been probed, prepared and armed',
        paced: `real time, as real agents send: at the end of each wall-clock second every agent sends that second's interval (${INTERVAL_METRICS.length} histograms) and its records of the second (${PACED_RECORDS_PER_AGENT_S} requests per agent-second: all of them, sample_every 1, or every ${SAMPLE_EVERY}th, the agents keeping the rest)`,
        merge_lag_ms:
          "per paced second, from the second's end (wall clock) to the arrival of the coordinator's ack of the last agent's interval for it — the moment the coordinator held every agent's interval for the second and closed it (it closes a second in the handler of its last interval, before the ack); p50, p99 and max over the paced seconds; it includes the fleet processes' own send delay (send_delay_ms_max) on this shared machine",
        merge_lag_held: `every paced second merged and the merge lag p99 ≤ ${MERGE_LAG_BOUND_MS} ms`,
        seconds_not_merged: `paced seconds whose intervals the coordinator had not all acknowledged ${MERGE_WAIT_S} s after the last paced second ended`,
        coordinator_cpu_ms_per_agent_second: `coordinator CPU (all threads, /proc) from the paced phase's start until every paced second was merged (or ${MERGE_WAIT_S} s after the last), per agent and paced second; it includes the heartbeats, pings and probes of those seconds`,
        agents_per_free_core:
          'agents whose paced seconds one core would merge in real time at that cost (1000 / coordinator_cpu_ms_per_agent_second): an upper bound on the limit on a machine with a free core, as each second arrives in one burst',
        limit_agents: `the largest fleet size measured whose paced phase kept merge_lag_held (null: none did); sizes are ${sizes.join(', ')}`,
        coordinator_peak_rss_mib: 'largest resident set of the coordinator process sampled every 200 ms over the paced and flooded phases',
        records_ack_wait_ms: `per record batch of the flooded records phase, milliseconds from its send (synthetic agent) to the arrival of the first acknowledgement covering it, p50 and p99 over every batch of every agent; flooded, each agent keeps its window of batches unacknowledged, so it includes the wait behind the batches before it`,
        durable_vs_volatile: `median records/s acknowledged while flooded (records alone, after 1 s of warm-up) by ${COMPARE_AGENTS} agents with the journal (each ack after the fdatasync of its group) over the median of the same build without it (${VOLATILE_ACKS_ENV}=1: acknowledged once taken): ${COMPARE_ROUNDS} rounds in this invocation, each starting one coordinator of each kind, in an order rotated each round (acks_compared lists every run); _per_cpu_s the same ratio per second of coordinator CPU`,
        appended_vs_volatile: `the same ratio for the journal appended to one file with a 2 ms group deadline (${APPENDED_JOURNAL_ENV}=1), as it was written before its preallocated segments: the before, measured in the same invocation`,
      },
      phase_s: phaseS,
      paced_s: pacedS,
      merge_lag_bound_ms: MERGE_LAG_BOUND_MS,
      sample_every: SAMPLE_EVERY,
      fleets: out,
      acks_compared: cmp.runs,
      durable_vs_volatile: durableVsVolatile,
      durable_vs_volatile_per_cpu_s: durableVsVolatileCpu,
      appended_vs_volatile: appendedVsVolatile,
      ack_wait_ms: Object.fromEntries(
        (['durable', 'appended', 'volatile'] as const).map((k) => {
          const m = cmp.median(k);
          return [k, m && { p50: m.ack_p50, p99: m.ack_p99 }];
        }),
      ),
      limit_agents: { all_records: limitAll, sampled_records: limitSampled },
      goal: {
        records_per_s_min: 200000,
        interval_merges_per_s_min: 5000,
        basis: 'per coordinator CPU-second (one core), at the smallest size',
        durable_vs_volatile_min: 0.9,
        fleet_agents: `${largest} agents held by one coordinator (merge lag p99 ≤ ${MERGE_LAG_BOUND_MS} ms) with sampled records`,
      },
      goals_met: first
        ? {
            records: first.records ? first.records.per_coordinator_cpu_s >= 200000 : null,
            interval_merges: first.intervals ? first.intervals.per_coordinator_cpu_s >= 5000 : null,
            fleet_agents: ctx.quick ? null : limitSampled === largest,
            durable_vs_volatile: durableVsVolatile === null ? null : durableVsVolatile >= 0.9,
          }
        : null,
    },
    table,
  };
}

/** The coordinator_ingest suite. */
export const coordinatorIngest: Suite = { name: 'coordinator_ingest', run };
