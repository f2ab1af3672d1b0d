// `coordinator resume RUN_DIR`, and `coordinator start` finding a run it did not finish in --out:
// the run is recovered from its journal (run/recovered.ts) on a fleet listening where its agents
// were told to connect, so the agents that outlived the stopped coordinator rejoin within their
// grace, and it is completed. A run directory without a readable journal cannot be recovered:
// the error says where the agents' spools are.
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { anchoredClock } from '../shared/clock.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import { failpoint } from '../shared/failpoints.js';
import type { Plan } from '../shared/plan.js';
import { Fleet } from './fleet.js';
import { readJournal, readJournalHeader, setAside, spoolAdvice } from './journal/reader.js';
import { journalPath } from './journal/run-journal.js';
import type { LocalSim } from './local.js';
import { startLocalSim } from './local.js';
import { planSha256 } from './plan-hash.js';
import { writerAlive } from './process-alive.js';
import type { EmbeddedSim } from './run/embedded-sim.js';
import type { JournalHeader } from './run/journal-header.js';
import { JOURNAL_FORMAT } from './run/journal-header.js';
import type { RunOptions, RunResult } from './run/options.js';
import { RecoveredSession } from './run/recovered.js';
import { Scraper } from './scrape/scraper.js';
import { scrapeTargets } from './scrape/targets.js';

/** Whether the coordinator that wrote the journal is still running here (the run is in progress, not unfinished). */
export function writerRunning(header: JournalHeader): boolean {
  if (header.coordinator.host !== hostname()) return false;
  return writerAlive(header.coordinator.pid, header.coordinator.started_unix_ms);
}

/** Run directories under an --out that hold a journal, sorted oldest first (run ids begin with their start). */
export interface UnfinishedRuns {
  /** Unfinished here, of the plan asked (or of any plan when none is). */
  here: string[];
  /** Written by a coordinator on another host, which cannot be told from a run in progress. */
  elsewhere: string[];
  /** Unfinished here, of another plan (a new command, not the same one restarted). */
  otherPlan: string[];
  /** A journal whose header cannot be read: its run never started its load (nothing was acknowledged). */
  noHeader: string[];
}

/** Every run directory under `outDir` whose journal is still there and whose coordinator, on this host, is no longer running. */
export async function unfinishedRuns(outDir: string, plan?: Plan): Promise<UnfinishedRuns> {
  const found: UnfinishedRuns = { here: [], elsewhere: [], otherPlan: [], noHeader: [] };
  if (!existsSync(outDir)) return found;
  const dirs = (await readdir(outDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => join(outDir, d.name));
  for (const dir of dirs.sort()) {
    const header = (await readJournalHeader(dir)) as JournalHeader | null;
    if (header === null) {
      if (existsSync(journalPath(dir))) found.noHeader.push(dir);
      continue;
    }
    if (header.format !== JOURNAL_FORMAT) continue;
    if (header.coordinator.host !== hostname()) found.elsewhere.push(dir);
    else if (writerRunning(header)) continue;
    else if (plan && !samePlan(header, plan)) found.otherPlan.push(dir);
    else found.here.push(dir);
  }
  return found;
}

// The same command restarted names the same plan: the hash of the plan as the command gave it.
// Journals written before the hash was kept are matched by name, seed, length and classes.
function samePlan(header: JournalHeader, asked: Plan): boolean {
  if (header.plan_sha256) return header.plan_sha256 === planSha256(asked);
  const shape = (p: Plan) => JSON.stringify([p.name, p.seed, p.duration_s, p.classes.map((c) => c.name)]);
  return shape(header.plan) === shape(asked);
}

// Where the stopped coordinator listened: the recovery listens there again unless told otherwise.
function listenOf(header: JournalHeader, opts: RunOptions): { host: string; port: number } {
  if (!opts.spawnLocal) return { host: opts.listenHost, port: opts.listenPort };
  const url = header.options.listen_url;
  if (!url)
    throw new LoadfleetError(ErrorCode.USAGE, 'the journal does not say where the agents connected: give --listen', {
      exitCode: ExitCode.INVALID_INPUT,
    });
  const u = new URL(url);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) };
}

/**
 * Recovers and completes the run in `runDir`. `opts`: the command's flags (token, TLS, --listen,
 * output); the run's own settings (agents, grace, loss budget, clock tolerances) come from the journal.
 * The order is the promise's: the journal is read, reopened and synced, and replayed, and the
 * embedded target started again, before the fleet listens for the agents.
 */
export async function resumeRun(runDir: string, opts: RunOptions): Promise<RunResult> {
  // A run in progress is refused before its journal is even read (a reader could take a group being written for a tail).
  const head = (await readJournalHeader(runDir)) as JournalHeader | null;
  if (head?.format === JOURNAL_FORMAT && writerRunning(head)) throw inProgress(head);
  const journal = await readJournal(runDir, basename(runDir));
  const header = journal.header as JournalHeader;
  if (header?.format !== JOURNAL_FORMAT)
    throw new LoadfleetError(ErrorCode.JOURNAL_UNREADABLE, `cannot recover ${runDir}: its journal is not a ${JOURNAL_FORMAT} journal`, {
      exitCode: ExitCode.INVALID_INPUT,
      details: spoolAdvice(basename(runDir)),
    });
  if (writerRunning(header)) throw inProgress(header);
  failpoint('recover.read');
  if (!journal.frames.some((f) => f.kind === 'message')) throw await notStarted(runDir, header);
  await removeStaleTemporaries(runDir, header.coordinator.pid);
  const { host, port } = listenOf(header, opts);
  const runOpts: RunOptions = {
    ...opts,
    plan: header.plan,
    outDir: dirname(runDir),
    agents: header.agents.length,
    spawnLocal: false,
    listenHost: host,
    listenPort: port,
    agentGraceMs: header.options.agent_grace_ms,
    maxAgentLoss: header.options.max_agent_loss,
    clockToleranceNs: header.options.clock_tolerance_ns,
    maxStartSkewNs: header.options.max_start_skew_ns,
    ...(header.options.experiment && { experiment: header.options.experiment }),
  };
  opts.log(`recovering run ${header.run_id} from ${journalPath(runDir)} (written by coordinator pid ${header.coordinator.pid})`);
  if (journal.tornTailBytes > 0)
    opts.log(
      `the journal ends in ${journal.tornTailBytes} bytes past its last valid frame (${journal.zeroTailBytes} of them zeros): its end, never acknowledged; cut off`,
    );
  const sim = header.embedded_sim ? await restartEmbeddedSim(header.plan, header.embedded_sim, opts.log) : undefined;
  try {
    const clock = anchoredClock();
    const scraper = new Scraper(scrapeTargets(header.plan, sim), runDir, clock, { plan: header.plan });
    const session = new RecoveredSession(runOpts, header, journal, runDir, clock, scraper);
    let fleet: Fleet;
    try {
      await session.recover();
      failpoint('recover.listen');
      fleet = await Fleet.open(runOpts, { clock, run: session });
    } catch (err) {
      await session.close().catch(() => {});
      await scraper.close().catch(() => {});
      throw err;
    }
    try {
      return await session.run();
    } finally {
      fleet.setRun(null);
      await scraper.close().catch(() => {});
      await fleet.release('the run is over');
    }
  } finally {
    await sim?.stop();
  }
}

// No agent message reached the journal: the coordinator stopped before the load began (an agent
// not yet running drops a run whose link closes), so nothing was acknowledged and there is nothing
// to take up. The journal is set aside, so that the same command restarted starts the run anew.
async function notStarted(runDir: string, header: JournalHeader): Promise<LoadfleetError> {
  const why =
    'holds no agent message: its coordinator stopped before the load began, nothing was acknowledged, and the agents dropped the run';
  const aside = await setAside(runDir, 'not-started', [`run ${header.run_id}: its journal ${why}.`, 'Nothing to recover.']);
  return new LoadfleetError(ErrorCode.JOURNAL_UNREADABLE, `cannot recover ${runDir}: its journal ${why}; set aside as ${aside}`, {
    exitCode: ExitCode.INVALID_INPUT,
  });
}

function inProgress(header: JournalHeader): LoadfleetError {
  return new LoadfleetError(
    ErrorCode.USAGE,
    `run ${header.run_id} is in progress: its coordinator (pid ${header.coordinator.pid}) is running on this host`,
    { exitCode: ExitCode.INVALID_INPUT },
  );
}

// The run's embedded engine-sim died with its coordinator (its stdin closed): it is started again
// with the same flags at the same address, where the agents still send their requests. The span
// receiver it sent to is not restarted, so that flag is dropped.
async function restartEmbeddedSim(plan: Plan, sim: EmbeddedSim, log: (line: string) => void): Promise<LocalSim> {
  const port = Number(new URL(plan.target!.base_url).port);
  const args: string[] = [];
  for (let i = 0; i < sim.args.length; i++) {
    const a = sim.args[i]!;
    if (a === '--otlp-traces-endpoint') i++;
    else if (!a.startsWith('--otlp-traces-endpoint=')) args.push(a);
  }
  const started = await startLocalSim(args, log, sim.env, port);
  log(`engine-sim started again at ${started.baseUrl} (the run's target)`);
  return started;
}

// The stopped coordinator's half-written files (named *.tmp-<its pid>) are rewritten from the journal.
async function removeStaleTemporaries(runDir: string, pid: number): Promise<void> {
  const mark = `.tmp-${pid}`;
  for (const name of await readdir(runDir)) if (name.includes(mark)) await rm(join(runDir, name), { force: true });
  // A run.json of the stopped coordinator (it stopped while writing the rest) is written again.
  await rm(join(runDir, 'run.json'), { force: true });
}
