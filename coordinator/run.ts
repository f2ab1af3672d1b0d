// One run, end to end (the I/O side; planning and summarising are pure modules): take the fleet's
// agents, check each share against its agent's limits, set up the target (run/setup.ts), run the
// agents (run/session.ts: welcome, clocks, shares, a common start, everything they send, holding an
// agent whose link was cut as reconnecting for a grace period) and write the run directory — also
// when the run ends early. A run whose agent left before its start is tried again.

import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, LoadfleetError } from '../shared/errors.js';
import { buildSchedule } from '../shared/schedule.js';
import { attachWorkloadInputs } from '../shared/workload-files.js';
import { writeFailedRunJson } from './artifacts/failed-run-json.js';
import type { FleetOptions } from './fleet.js';
import { Fleet } from './fleet.js';
import { checkHeadroom, freeCoresNow } from './headroom/index.js';
import type { RunOnFleetOptions, RunOptions, RunResult } from './run/options.js';
import { BEFORE_START } from './run/options.js';
import { RunSession } from './run/session.js';
import { setUpTarget } from './run/setup.js';
import { onStopSignal } from './stop-signals.js';

export type { RunOnFleetOptions, RunOptions, RunResult } from './run/options.js';

/** Makes a run id like 20261202T134501Z-default-7f3a. */
export function newRunId(planName: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${planName}-${randomBytes(2).toString('hex')}`;
}

/** How often a run is retried when an agent leaves before its start. */
const START_ATTEMPTS = 3;

/** Executes one run on a fleet of its own (`coordinator start`), released at the end. */
export async function executeRun(opts: RunOptions): Promise<RunResult> {
  return withFleet(opts, 'the run is over', (fleet) => runOnFleet(fleet, opts));
}

/** Opens a fleet, waits for its N agents, runs `body` on it and releases it whatever happens. */
export async function withFleet<T>(opts: FleetOptions, releaseReason: string, body: (fleet: Fleet) => Promise<T>): Promise<T> {
  const fleet = await Fleet.open(opts);
  // A stop signal while no run is under way (agents joining, between runs or stages) ends the
  // waiting; the agents that came are released below either way.
  const offStop = onStopSignal((signal) => fleet.stop(signal));
  try {
    await fleet.waitForAgents();
    return await body(fleet);
  } finally {
    await fleet.release(releaseReason);
    offStop();
  }
}

/**
 * Executes one run on the fleet's agents; always writes the run directory once agents have been
 * given the plan. Throws LF_FLEET_SHORT (before any directory exists) when too many are gone.
 */
export async function runOnFleet(fleet: Fleet, opts: RunOnFleetOptions): Promise<RunResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runAttempt(fleet, opts);
    } catch (err) {
      const retry = err instanceof LoadfleetError && err.code === ErrorCode.AGENT_LOST && err.cause === BEFORE_START;
      if (!retry || attempt >= START_ATTEMPTS) throw err;
      opts.log(`${err.message}; nothing was sent, so the run starts again with the fleet's agents`);
    }
  }
}

async function runAttempt(fleet: Fleet, opts: RunOnFleetOptions): Promise<RunResult> {
  const { agents, lossBudget } = await fleet.agentsForRun();
  // Trace and dataset files are read (and checked: exit 2 with their line numbers) before anything exists.
  const planWithInputs = await attachWorkloadInputs(opts.plan);
  // Each share against its agent's measured limits, before anything is sent (or any directory made).
  const headroom = opts.headroom
    ? checkHeadroom(
        planWithInputs,
        buildSchedule(planWithInputs),
        agents.map((a) => ({ id: a.hello.agent_id, selfTest: a.hello.self_test, workers: a.hello.workers ?? 1 })),
        opts.headroom,
        opts.log,
        fleet.opts.spawnLocal
          ? { freeCores: opts.headroom.freeCores ?? freeCoresNow(), ...(fleet.localLayout && { groups: fleet.localLayout.groups }) }
          : undefined,
      )
    : null;
  const runId = newRunId(opts.plan.name);
  const dir = join(opts.outDir, runId);
  await mkdir(dir, { recursive: true });
  const cleanups: (() => Promise<void>)[] = [];
  const startedAt = new Date();
  let plan = opts.plan;
  let session: RunSession | undefined;
  try {
    const setup = await setUpTarget(opts.plan, planWithInputs, opts.simArgs, runId, dir, fleet.clock, cleanups, opts.log, (p) => {
      plan = p;
    });
    session = new RunSession(opts, setup.plan, runId, dir, fleet.clock, agents, lossBudget, setup.scraper, headroom);
    session.cacheReset = setup.cacheReset;
    session.traces = setup.traces;
    session.localLayout = fleet.localLayout;
    session.listenUrl = fleet.listenUrl;
    session.embeddedSim = setup.embeddedSim;
    fleet.setRun(session);
    cleanups.unshift(async () => fleet.setRun(null));
    return await session.run();
  } catch (err) {
    // A run that never started leaves no directory behind: its retry is the run.
    if (err instanceof LoadfleetError && err.cause === BEFORE_START) cleanups.push(() => rm(dir, { recursive: true, force: true }));
    // Any other failure before the run directory was written keeps its evidence there.
    else if (!session?.wroteRunJson) {
      // What the agents handed over is in the journal: the run can still be completed from it.
      if (session?.journal)
        opts.log(`the run's journal is kept in ${dir}: \`coordinator resume ${dir}\` completes the run once the cause is dealt with`);
      const progress =
        session?.progress() ?? agents.map((a) => ({ agent_id: a.hello.agent_id, host: a.hello.host, state: 'joined', detail: null }));
      await writeFailedRunJson({ dir, runId, plan, startedAt, error: err, agents: progress }).catch(() => {});
    }
    throw err;
  } finally {
    for (const c of cleanups) await c().catch(() => {});
  }
}
