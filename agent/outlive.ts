// An agent that outlives its coordinator (the coordinator crashed, was killed, lost its node). The
// load has stopped already: the coordinator's grace ran out (session.ts), and endpoints are too
// expensive to load for nobody. What the agent finished is on its spool, and a coordinator that
// comes back (restarted, or `coordinator resume`) can still take it; so the agent keeps trying to
// hand the spool over for a stated time (--coordinator-wait-s), then exits and says where the spool
// is and how to hand it over later: start an agent with the same --id and --spool-dir, which offers
// what it finds there before anything else (leftover.ts).
import { basename } from 'node:path';
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import { CLOSE_CODE } from '../shared/protocol.js';
import { offerSpool } from './leftover.js';
import type { SessionOptions } from './session-options.js';
import { findSpools, setAside } from './spool.js';

/** How long an agent whose coordinator is gone keeps trying to hand its spool over, by default: a pod's restart or a person's. */
export const DEFAULT_COORDINATOR_WAIT_S = 300;

/** The environment variable that sets --coordinator-wait-s. */
export const COORDINATOR_WAIT_ENV = 'LOADFLEET_COORDINATOR_WAIT_S';

/** Pause between two offers when a coordinator took the link and then lost it again. */
const RETRY_MS = 1000;

/** The command that hands a kept spool over later (what a person runs). */
export function handOverCommand(opts: Pick<SessionOptions, 'agentId' | 'spoolDir'>): string {
  const argv0 = process.env['LOADFLEET_ARGV0'] ?? 'loadfleet';
  return `${argv0} agent --coordinator URL --id ${opts.agentId} --spool-dir ${opts.spoolDir}`;
}

/**
 * After a session ended without a coordinator to take its run: if this agent's spool is still
 * there, offers it for up to `opts.coordinatorWaitMs`. Resolves with null when there was no spool,
 * 0 once it is handed over, else ExitCode.FAILURE with the spool kept and the way to hand it over said.
 */
export async function outliveCoordinator(opts: SessionOptions): Promise<number | null> {
  const spools = await findSpools(opts.spoolDir, opts.agentId);
  if (spools.length === 0) return null;
  const waitS = opts.coordinatorWaitMs / 1000;
  opts.log(
    `the coordinator is gone and the load is stopped; ${spools.length} spool file(s) kept in ${opts.spoolDir}; trying to hand them over to ${opts.coordinatorUrl} for up to ${waitS} s (--coordinator-wait-s)`,
  );
  const deadline = Date.now() + opts.coordinatorWaitMs;
  let why = `no coordinator answered within ${waitS} s`;
  while (Date.now() < deadline) {
    let code: number;
    try {
      code = await offerSpool({ ...opts, connectTimeoutMs: deadline - Date.now() }, spools);
    } catch (err) {
      // Refused for good (a wrong token, another protocol): waiting cannot help.
      if (err instanceof LoadfleetError && err.exitCode === ExitCode.INVALID_INPUT) {
        why = `${err.code}: ${err.message}`;
        break;
      }
      why = (err as Error).message;
      continue;
    }
    if (code === 0) return 0;
    if (code === CLOSE_CODE.UNKNOWN_RUN) {
      // A coordinator is there but does not hold that run (a new one, not resumed): set the spool
      // aside so this agent can join runs again, and say where its records are.
      for (const path of spools) opts.log(`kept ${await setAside(path)}: the coordinator at ${opts.coordinatorUrl} does not hold its run`);
      return ExitCode.FAILURE;
    }
    why = 'the coordinator closed the link during the upload';
    await new Promise((r) => setTimeout(r, RETRY_MS));
  }
  opts.log(
    `error ${ErrorCode.JOIN_TIMEOUT}: could not hand the spool over (${why}); it is kept in ${opts.spoolDir} (${spools.map((p) => basename(p)).join(', ')}). To hand it over, start this agent again with the same id and spool directory once a coordinator that holds the run is back (it offers the spool first): ${handOverCommand(opts)}`,
  );
  return ExitCode.FAILURE;
}
