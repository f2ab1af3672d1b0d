// `coordinator resume RUN_DIR`, and `coordinator start` finding a run it did not finish in --out:
// the run is recovered from its journal (run/recovered.ts) on a fleet listening where its agents
// were told to connect, so the agents that outlived the stopped coordinator rejoin within their
// grace, and it is completed. A run directory without a readable journal cannot be recovered:
// the error says where the agents' spools are.
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import type { Plan } from '../shared/plan.js';
import { Fleet } from './fleet.js';
import { readJournal, readJournalHeader, spoolAdvice } from './journal/reader.js';
import { journalPath } from './journal/run-journal.js';
import type { JournalHeader } from './run/journal-header.js';
import { JOURNAL_FORMAT } from './run/journal-header.js';
import type { RunOptions, RunResult } from './run/options.js';
import { RecoveredSession } from './run/recovered.js';
import { Scraper } from './scrape/scraper.js';
import { scrapeTargets } from './scrape/targets.js';

/** Whether the coordinator that wrote the journal is still running here (the run is in progress, not unfinished). */
export function writerRunning(header: JournalHeader): boolean {
  if (header.coordinator.host !== hostname()) return false;
  try {
    process.kill(header.coordinator.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The run directories under `outDir` whose journal is still there and whose coordinator, on this
 * host, is no longer running (it stopped before finishing them); `elsewhere`: those written by a
 * coordinator on another host, which cannot be told from a run in progress; `otherPlan`: unfinished
 * here but of another plan than `plan` (a new command, not the same one restarted).
 */
export async function unfinishedRuns(outDir: string, plan?: Plan): Promise<{ here: string[]; elsewhere: string[]; otherPlan: string[] }> {
  const found = { here: [] as string[], elsewhere: [] as string[], otherPlan: [] as string[] };
  if (!existsSync(outDir)) return found;
  const dirs = (await readdir(outDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => join(outDir, d.name));
  for (const dir of dirs.sort()) {
    const header = (await readJournalHeader(dir)) as JournalHeader | null;
    if (header?.format !== JOURNAL_FORMAT) continue;
    if (header.coordinator.host !== hostname()) found.elsewhere.push(dir);
    else if (writerRunning(header)) continue;
    else if (plan && !samePlan(header.plan, plan)) found.otherPlan.push(dir);
    else found.here.push(dir);
  }
  return found;
}

// The same command restarted names the same plan: its name, seed, length and classes (the journal
// holds the plan as run, its target resolved and its prompts calibrated, so not byte for byte).
function samePlan(ran: Plan, asked: Plan): boolean {
  const shape = (p: Plan) => JSON.stringify([p.name, p.seed, p.duration_s, p.classes.map((c) => c.name)]);
  return shape(ran) === shape(asked);
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
 */
export async function resumeRun(runDir: string, opts: RunOptions): Promise<RunResult> {
  const journal = await readJournal(runDir, basename(runDir));
  const header = journal.header as JournalHeader;
  if (header?.format !== JOURNAL_FORMAT)
    throw new LoadfleetError(ErrorCode.JOURNAL_UNREADABLE, `cannot recover ${runDir}: its journal is not a ${JOURNAL_FORMAT} journal`, {
      exitCode: ExitCode.INVALID_INPUT,
      details: spoolAdvice(basename(runDir)),
    });
  if (writerRunning(header))
    throw new LoadfleetError(
      ErrorCode.USAGE,
      `run ${header.run_id} is in progress: its coordinator (pid ${header.coordinator.pid}) is running on this host`,
      { exitCode: ExitCode.INVALID_INPUT },
    );
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
  const fleet = await Fleet.open(runOpts);
  try {
    const scraper = new Scraper(scrapeTargets(header.plan, undefined), runDir, fleet.clock, { plan: header.plan });
    const session = new RecoveredSession(runOpts, header, journal, runDir, fleet.clock, scraper);
    fleet.setRun(session);
    try {
      return await session.run();
    } finally {
      fleet.setRun(null);
      await scraper.close().catch(() => {});
    }
  } finally {
    await fleet.release('the run is over');
  }
}

// The stopped coordinator's half-written files (named *.tmp-<its pid>) are rewritten from the journal.
async function removeStaleTemporaries(runDir: string, pid: number): Promise<void> {
  const mark = `.tmp-${pid}`;
  for (const name of await readdir(runDir)) if (name.includes(mark)) await rm(join(runDir, name), { force: true });
  // A run.json of the stopped coordinator (it stopped while writing the rest) is written again.
  await rm(join(runDir, 'run.json'), { force: true });
}
