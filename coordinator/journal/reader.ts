// Reading a run directory's journal for a recovery: its header and every frame that was made
// durable, a torn last frame cut off (it was never acknowledged, so its agent still holds it), and
// the instant of its last write (the latest moment the coordinator is known to have been alive).
// A journal that is missing or damaged cannot be recovered from: the error says where the agents'
// own copies are and how to collect them.
import { open, readFile, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import type { JournalFrame } from './frame.js';
import { FRAME_HEAD, MAX_PAYLOAD, parseJournal } from './frame.js';
import { journalPath } from './run-journal.js';

/** A journal as a recovery reads it. */
export interface ReadJournal {
  header: unknown;
  /** Every frame after the header, in the order it was written. */
  frames: JournalFrame[];
  /** Bytes of a torn last frame that were cut off the file. */
  tornTailBytes: number;
  /** When the file was last written (ms since the Unix epoch). */
  lastWriteMs: number;
}

/** Where each agent keeps a run's records when no coordinator took them, for the error's advice. */
export function spoolAdvice(runId: string): string[] {
  return [
    `every agent keeps what it measured in run ${runId} in its spool until a coordinator acknowledges it:`,
    `  on each agent host: <--spool-dir>/<agent id>.${runId}*.spool.ndjson (default --spool-dir ${join(tmpdir(), 'loadfleet-spool')}; set aside as .unsent once no coordinator holds the run)`,
    '  copy those files to keep the records: each line after the first is one request record (the first names the run and the agent)',
  ];
}

/** The header of `runDir`'s journal alone (its first frame), or null when there is none to read. */
export async function readJournalHeader(runDir: string): Promise<unknown | null> {
  const fh = await open(journalPath(runDir), 'r').catch(() => null);
  if (!fh) return null;
  try {
    const head = Buffer.alloc(FRAME_HEAD);
    if ((await fh.read(head, 0, FRAME_HEAD, 0)).bytesRead < FRAME_HEAD) return null;
    const len = head.readUInt32LE(0);
    if (len === 0 || len > MAX_PAYLOAD) return null;
    const frame = Buffer.alloc(FRAME_HEAD + len);
    if ((await fh.read(frame, 0, frame.length, 0)).bytesRead < frame.length) return null;
    const first = parseJournal(frame).frames[0];
    return first?.kind === 'header' ? first.header : null;
  } finally {
    await fh.close();
  }
}

/**
 * Reads `runDir`'s journal and cuts a torn tail off the file (so appending goes on after the last
 * whole frame). Throws LF_JOURNAL_UNREADABLE, with the spool advice, when it is missing, has no
 * header, or is damaged before its end.
 */
export async function readJournal(runDir: string, runIdGuess: string): Promise<ReadJournal> {
  const path = journalPath(runDir);
  const unreadable = (why: string): LoadfleetError =>
    new LoadfleetError(ErrorCode.JOURNAL_UNREADABLE, `cannot recover ${runDir}: its journal ${path} ${why}`, {
      exitCode: ExitCode.INVALID_INPUT,
      details: spoolAdvice(runIdGuess),
    });
  let bytes: Buffer;
  let lastWriteMs: number;
  try {
    bytes = await readFile(path);
    lastWriteMs = (await stat(path)).mtimeMs;
  } catch (err) {
    throw unreadable(`could not be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const parsed = parseJournal(bytes);
  if (parsed.damage) throw unreadable(`is damaged: ${parsed.damage}`);
  const [first, ...frames] = parsed.frames;
  if (first?.kind !== 'header') throw unreadable('has no header (the run had not started its load)');
  if (parsed.tornTailBytes > 0) await truncate(path, parsed.goodBytes);
  return { header: first.header, frames, tornTailBytes: parsed.tornTailBytes, lastWriteMs };
}
