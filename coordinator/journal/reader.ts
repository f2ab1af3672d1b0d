// Reading a run directory's journal for a recovery: its header and every frame that was made
// durable, a torn last frame cut off (it was never acknowledged, so its agent still holds it), and
// the instant of its last write (the latest moment the coordinator is known to have been alive).
// A zero or torn tail is the log's end (counted here, cut off when the journal is reopened). A
// journal that is missing, has no header, or is damaged before its last valid frame cannot be
// recovered from: a damaged one is set aside (renamed, with a reason file) so that the next start
// does not meet it again, and the error says where the agents' own copies are.
import { open, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import type { JournalFrame } from './frame.js';
import { FRAME_HEAD, MAX_PAYLOAD, parseJournal } from './frame.js';
import { journalPath } from './run-journal.js';
import { parseSegments, segmentIndex, segmentPath } from './segments.js';

/** A journal as a recovery reads it. */
export interface ReadJournal {
  header: unknown;
  /** Every frame after the header, in the order it was written. */
  frames: JournalFrame[];
  /** The end of the last valid frame: the journal is cut there when it is reopened. */
  goodBytes: number;
  /** Bytes past the last valid frame (a torn frame, zeros): the log's end, never acknowledged. */
  tornTailBytes: number;
  /** Of those, the zeros at the very end (a file grown before its data reached the disk). */
  zeroTailBytes: number;
  /** When the file was last written (ms since the Unix epoch). */
  lastWriteMs: number;
}

/** Where each agent keeps a run's records when no coordinator took them, for the error's advice. */
export function spoolAdvice(runId: string, agents: readonly { agent_id: string; host: string }[] = []): string[] {
  return [
    `every agent keeps what it measured in run ${runId} in its spool until a coordinator acknowledges it:`,
    `  on each agent host: <--spool-dir>/<agent id>.${runId}*.spool.ndjson (default --spool-dir ${join(tmpdir(), 'loadfleet-spool')}; set aside as .unsent once no coordinator holds the run)`,
    ...agents.map((a) => `  agent ${a.agent_id} on ${a.host}: <--spool-dir>/${a.agent_id}.${runId}*.spool.ndjson`),
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

/** Why a journal was set aside: damaged before its end, or its run never began its load. */
export type SetAsideWhy = 'damaged' | 'not-started';

/** Where a journal set aside goes, and its reason file. */
export function setAsidePaths(runDir: string, why: SetAsideWhy = 'damaged'): { journal: string; reason: string } {
  return { journal: `${journalPath(runDir)}.${why}`, reason: `${journalPath(runDir)}.${why}.reason.txt` };
}

/**
 * Renames a journal that cannot be recovered out of the way (the run directory no longer holds an
 * unfinished run, so a restarted `start` goes on), with the reason and the spools beside it.
 */
export async function setAside(runDir: string, why: SetAsideWhy, lines: readonly string[]): Promise<string> {
  const to = setAsidePaths(runDir, why);
  await writeFile(to.reason, `${lines.join('\n')}\n`);
  for (const i of await journalSegments(runDir))
    if (i > 0) await rename(segmentPath(journalPath(runDir), i), `${segmentPath(journalPath(runDir), i)}.${why}`);
  await rename(journalPath(runDir), to.journal);
  const dir = await open(join(runDir, 'journal'), 'r');
  await dir.sync().finally(() => dir.close());
  return to.journal;
}

/** The indices of the segments `runDir`'s journal has on disk, in order (0 is journalPath's file). */
export async function journalSegments(runDir: string): Promise<number[]> {
  const first = journalPath(runDir);
  const names = await readdir(dirname(first)).catch(() => [] as string[]);
  return names
    .map((n) => segmentIndex(basename(first), n))
    .filter((i): i is number => i !== null)
    .sort((a, b) => a - b);
}

/**
 * Reads `runDir`'s journal up to its last valid frame (changing nothing: the tail is cut when it
 * is reopened). Throws LF_JOURNAL_UNREADABLE, with the spool advice, when it is missing, has no
 * header, or is damaged before its end — then it is first set aside with a reason file.
 */
export async function readJournal(runDir: string, runIdGuess: string): Promise<ReadJournal> {
  const path = journalPath(runDir);
  const unreadable = (why: string, details = spoolAdvice(runIdGuess)): LoadfleetError =>
    new LoadfleetError(ErrorCode.JOURNAL_UNREADABLE, `cannot recover ${runDir}: its journal ${path} ${why}`, {
      exitCode: ExitCode.INVALID_INPUT,
      details,
    });
  let segments: Buffer[];
  let lastWriteMs: number;
  try {
    // The first segment read first: without it there is no journal, whatever else is there.
    segments = [await readFile(path)];
    lastWriteMs = (await stat(path)).mtimeMs;
    for (const i of (await journalSegments(runDir)).filter((k) => k > 0)) {
      segments.push(await readFile(segmentPath(path, i)));
      lastWriteMs = Math.max(lastWriteMs, (await stat(segmentPath(path, i))).mtimeMs);
    }
  } catch (err) {
    for (const why of ['damaged', 'not-started'] as const) {
      const aside = setAsidePaths(runDir, why);
      const reason = await readFile(aside.reason, 'utf8').catch(() => null);
      if (reason !== null) throw unreadable(`was set aside as ${why}: ${aside.journal} (the reason in ${aside.reason})`);
    }
    throw unreadable(`could not be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const parsed = parseSegments(segments);
  const totalBytes = segments.reduce((n, b) => n + b.length, 0);
  const [first, ...frames] = parsed.frames;
  const header = first?.kind === 'header' ? (first.header as { run_id?: string; agents?: { agent_id: string; host: string }[] }) : null;
  if (parsed.damage) {
    const runId = header?.run_id ?? runIdGuess;
    const advice = spoolAdvice(runId, header?.agents ?? []);
    const what = `is damaged before its end: ${parsed.damage}, and a valid frame follows at byte ${parsed.resumesAt} (${parsed.frames.length} frames before it read, ${totalBytes} bytes in all)`;
    const aside = await setAside(runDir, 'damaged', [
      `run ${runId}: its journal ${what}.`,
      "Damage before the last valid frame is not a crash's tail: the run cannot be recovered from it, and was set aside so that a restarted coordinator goes on.",
      ...advice,
    ]);
    throw unreadable(`${what}; set aside as ${aside} (the reason beside it)`, advice);
  }
  if (!header) throw unreadable('has no header (the run had not started its load)');
  return {
    header,
    frames,
    goodBytes: parsed.goodBytes,
    tornTailBytes: parsed.tornTailBytes,
    zeroTailBytes: parsed.zeroTailBytes,
    lastWriteMs,
  };
}
