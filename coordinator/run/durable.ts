// What makes a run's acknowledgements mean durable: its journal opened once the start is chosen
// (the header first), each sequenced message made durable before the channel acknowledges it, a
// journal that fails ending the run (its agents told why, and keeping what was not acknowledged),
// and a bounded wait for a spool upload under way before the run stops taking messages.
import { formatDuration } from '../../shared/format.js';
import { CLOSE_CODE } from '../../shared/protocol.js';
import type { AgentChannel, ChannelHooks } from '../channel.js';
import { RunJournal } from '../journal/run-journal.js';
import type { GroupCommit } from '../journal/writer.js';
import { DEFAULT_GROUP_COMMIT } from '../journal/writer.js';
import type { RunState } from './context.js';
import { journalHeader } from './journal-header.js';

/**
 * How long a run whose agents are all final or lost still waits for a restarted agent's spool
 * upload that is under way (heard from within UPLOAD_SILENCE_MS) before it stops taking messages.
 */
export const UPLOAD_WAIT_MS = 30_000;
/** An upload not heard from for this long is not under way. */
const UPLOAD_SILENCE_MS = 5000;

/** The channel hooks that tie acknowledgements to the run's journal and refuse what it can no longer take. */
export function durabilityHooks(run: RunState): Pick<ChannelHooks, 'durable' | 'refusal' | 'refused'> {
  return {
    durable: (ch, raw) => run.journal?.message(ch.index, ch.epoch ?? '', raw) ?? null,
    refusal: () => run.refusal(),
    refused: (ch, why) => run.opts.log(`agent ${ch.id}: a message was refused and its link closed (${why})`),
  };
}

/**
 * Set to 1 in the coordinator's environment by `npm run bench` alone: no journal, every message
 * acknowledged once taken (volatile), so the same build is measured with and without durability.
 */
export const VOLATILE_ACKS_ENV = 'LOADFLEET_BENCH_VOLATILE_ACKS';
/**
 * Set to 1 by `npm run bench` alone: the journal appended to one file with a 2 ms group deadline,
 * as it was written before its preallocated segments, measured beside them in the same build.
 */
export const APPENDED_JOURNAL_ENV = 'LOADFLEET_BENCH_APPENDED_JOURNAL';
const APPENDED: GroupCommit = { ...DEFAULT_GROUP_COMMIT, maxDelayMs: 2, adaptive: false, segmentBytes: 0, firstSegmentBytes: 0 };

/** Opens the run's journal and makes its header durable (before the agents are armed). */
export async function openJournal(run: RunState): Promise<void> {
  if (process.env[VOLATILE_ACKS_ENV] === '1') {
    run.opts.log(`${VOLATILE_ACKS_ENV}=1: no journal, acknowledgements are not durable (a benchmark's comparison)`);
    return;
  }
  const commit = process.env[APPENDED_JOURNAL_ENV] === '1' ? APPENDED : DEFAULT_GROUP_COMMIT;
  run.journal = await RunJournal.open(run.dir, journalHeader(run), (err) => journalFailed(run, err), commit);
}

/** A recovery's journal: the one it read, cut to its last valid frame (`goodBytes`) and synced whole. */
export async function reopenJournal(run: RunState, goodBytes: number): Promise<void> {
  run.journal = await RunJournal.reopen(run.dir, goodBytes, (err) => journalFailed(run, err));
}

// The journal cannot be written: nothing more is acknowledged; every agent still holding data is
// told why (its link closed with the reason), so it stops and keeps its spool; the run ends with the
// error. A running agent hears "unknown run" (it stops its load at once); a spool upload hears
// "finishing", so the agent offers its spool again to the coordinator that recovers the run.
function journalFailed(run: RunState, err: Error): void {
  if (run.fault) return;
  run.fault = err;
  run.opts.log(`${err.message}: ending the run`);
  const why = run.refusal()!;
  for (const s of run.states) {
    if (isUploading(s)) s.conn.close(why, CLOSE_CODE.FINISHING);
    else if (!s.done) s.conn.close(why, CLOSE_CODE.UNKNOWN_RUN);
  }
  run.wake();
}

/** A restarted agent's spool upload is on the channel's link and not yet handed over. */
export function isUploading(s: AgentChannel): boolean {
  return s.lost && s.uploadConn !== null && s.uploadConn === s.conn && !s.conn.closed && !s.spoolHandedOver;
}

/** Waits (at most `waitMs`, UPLOAD_WAIT_MS unless told) for spool uploads under way to hand over; says what it waited for and what it gave up on. */
export async function waitForUploads(run: RunState, waitMs = UPLOAD_WAIT_MS): Promise<void> {
  const busy = (): AgentChannel[] => run.states.filter((s) => isUploading(s) && Date.now() - s.lastHeardMs < UPLOAD_SILENCE_MS);
  if (busy().length === 0 || run.fault) return;
  run.opts.log(
    `waiting up to ${formatDuration(waitMs)} for spool uploads under way (${busy()
      .map((s) => s.id)
      .join(', ')})`,
  );
  const deadline = Date.now() + waitMs;
  while (busy().length > 0 && Date.now() < deadline && !run.fault)
    await new Promise<void>((r) => {
      run.wake = r;
      setTimeout(r, 200);
    });
  for (const s of run.states.filter(isUploading))
    run.runEvents.push(
      `agent ${s.id}'s spool upload was still under way when the run closed (${s.recoveredRecords} requests taken): the rest was refused, and the agent keeps its spool`,
    );
}
