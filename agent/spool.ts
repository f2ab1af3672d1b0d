// The agent's local spool: every finished request is appended to a file as it completes, so an
// agent that is killed or cut off loses nothing it finished. A restarted agent with the same id
// and spool directory finds the file and uploads it; the coordinator keeps each request once.
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, LoadfleetError } from '../shared/errors.js';
import { parseExact, stringifyExact } from '../shared/json.js';
import type { RequestRecord } from '../shared/metrics.js';
import type { Window } from '../shared/plan.js';

const SUFFIX = '.spool.ndjson';
/**
 * Finished requests are written at most this often (or once this many bytes wait): each write is
 * a wake of libuv's thread pool, ~0.12 ms of CPU on a contended 2-core machine, and one per check
 * phase was hundreds a second at high rates (docs/performance.md). Kept short: a process killed
 * outright (SIGKILL, OOM) loses the finished requests of at most this window that the link had not
 * yet carried either.
 */
const WRITE_EVERY_MS = 20;
const WRITE_AT_BYTES = 256 << 10;

/** The first line of a spool: what a later upload needs to rebuild this agent's histograms. */
export interface SpoolHeader {
  run_id: string;
  agent_id: string;
  windows: Window[];
}

/** One spooled request: its record and ITL gaps. */
export interface SpoolEntry {
  record: RequestRecord;
  gaps: number[];
}

/**
 * Why a spool could not be written: the path and the errno (ENOSPC, EIO, EROFS, …), in the words of
 * an error with the stable code LF_SPOOL_WRITE.
 */
export function spoolWriteError(path: string, err: NodeJS.ErrnoException): LoadfleetError {
  return new LoadfleetError(
    ErrorCode.SPOOL_WRITE,
    `the spool ${path} cannot be written (${err.code && !err.message.startsWith(err.code) ? `${err.code}: ` : ''}${err.message}); the load is stopped so no finished request goes unrecorded, and the spool stays until the coordinator has what it holds`,
    { cause: err },
  );
}

/** Appends finished requests of one run to `<dir>/<agent>.<run>.spool.ndjson`. */
export class Spool {
  private readonly out: WriteStream;
  /** The first write error: the stream is gone after it (later writes are dropped, close does not wait). */
  private failure: LoadfleetError | null = null;
  /** Lines not yet written, and the timer that writes them. */
  private pending = '';
  private timer: NodeJS.Timeout | undefined;

  /** `onError` hears the first write error once (a full disk, an I/O error): the agent must stop loading. */
  private constructor(
    readonly path: string,
    onError: (err: LoadfleetError) => void,
  ) {
    this.out = createWriteStream(path, { flags: 'a' });
    // Never a crash: the link still carries what was finished; the caller stops the load.
    this.out.on('error', (err: NodeJS.ErrnoException) => {
      if (this.failure) return;
      this.failure = spoolWriteError(path, err);
      onError(this.failure);
    });
  }

  /** Opens the spool of a run and writes its header; `part` names one worker thread's file. */
  static async open(dir: string, header: SpoolHeader, part = '', onError: (err: LoadfleetError) => void = () => {}): Promise<Spool> {
    await mkdir(dir, { recursive: true });
    const spool = new Spool(join(dir, `${header.agent_id}.${header.run_id}${part}${SUFFIX}`), onError);
    spool.out.write(`${stringifyExact(header)}\n`);
    return spool;
  }

  /** The write error that stopped this spool, if one did. */
  get failed(): LoadfleetError | null {
    return this.failure;
  }

  /**
   * Appends finished requests; they are written together within WRITE_EVERY_MS (the caller batches
   * them off the timing path, this batches the writes). Records hold no bigint (their times are ns offsets from the start), so plain JSON.stringify does.
   */
  append(entries: readonly { record: RequestRecord; gaps: ArrayLike<number> }[]): void {
    if (this.failure) return;
    let text = this.pending;
    for (const { record, gaps } of entries) text += `${JSON.stringify({ record, gaps: Array.from(gaps) })}\n`;
    this.pending = text;
    if (text.length >= WRITE_AT_BYTES) this.write();
    else this.timer ??= setTimeout(this.write, WRITE_EVERY_MS);
  }

  /** Writes what is pending now (also at close). */
  private readonly write = (): void => {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const text = this.pending;
    this.pending = '';
    if (text.length > 0 && !this.failure && !this.out.destroyed) this.out.write(text);
  };

  /**
   * Closes the file; `handedOver` deletes it at once (a run aborted before its start). A run that
   * finishes keeps it until the coordinator acknowledged its `final` (the session deletes it
   * then, with removeSpools).
   */
  async close(handedOver: boolean): Promise<void> {
    this.write();
    // A stream that failed is destroyed: its end callback may never come.
    if (!this.failure && !this.out.destroyed) await new Promise<void>((r) => this.out.end(() => r()));
    if (handedOver) await rm(this.path, { force: true });
  }
}

/**
 * The spool files an earlier process of `agentId` left behind for its newest run (one per worker
 * thread with `--workers`), or none. Run ids start with their UTC start time, so they sort by age.
 */
export async function findSpools(dir: string, agentId: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const mine = names.filter((n) => n.startsWith(`${agentId}.`) && n.endsWith(SUFFIX)).sort();
  if (mine.length === 0) return [];
  const { header } = await readSpool(join(dir, mine.at(-1)!));
  return mine.filter((n) => n.startsWith(`${agentId}.${header.run_id}`)).map((n) => join(dir, n));
}

/** Deletes every spool file of one run (all worker threads'): called once its `final` is acknowledged. */
export async function removeSpools(dir: string, agentId: string, runId: string): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const mine = names.filter((n) => n.startsWith(`${agentId}.${runId}`) && n.endsWith(SUFFIX));
  await Promise.all(mine.map((n) => rm(join(dir, n), { force: true })));
  return mine.length;
}

/** What a kept spool is renamed to: the run's records (not a spool to hand over: findSpools skips it). */
export const KEPT_SUFFIX = '.records.ndjson';

/**
 * Sampled records: the coordinator took `final` and a sample of the records, so the spool files of
 * the run stay, renamed `<agent>.<run>[part].records.ndjson` (same lines), as the only copy of the
 * rest. Returns how many files were kept.
 */
export async function keepSpools(dir: string, agentId: string, runId: string): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const mine = names.filter((n) => n.startsWith(`${agentId}.${runId}`) && n.endsWith(SUFFIX));
  await Promise.all(mine.map((n) => rename(join(dir, n), join(dir, `${n.slice(0, -SUFFIX.length)}${KEPT_SUFFIX}`))));
  return mine.length;
}

/** A spool read back: its header, its entries, and the lines it could not parse, counted. */
export interface SpoolRead {
  header: SpoolHeader;
  entries: SpoolEntry[];
  /** The last line was cut mid-write (the process died writing it): that one request is not in `entries`. */
  tornLast: boolean;
  /** Lines before the last that do not parse: not a torn write but damage, each a request lost. */
  corruptLines: number;
}

/**
 * Reads a spool. A torn last line is expected after a crash and is dropped; any other line that
 * does not parse is damage, counted apart so the caller can say so instead of uploading a short
 * spool as if it were whole.
 */
export async function readSpool(path: string): Promise<SpoolRead> {
  const lines = (await readFile(path, 'utf8')).split('\n').filter((l) => l.length > 0);
  const header = parseExact<SpoolHeader>(lines[0]!);
  const entries: SpoolEntry[] = [];
  let tornLast = false;
  let corruptLines = 0;
  const body = lines.slice(1);
  body.forEach((line, i) => {
    try {
      entries.push(parseExact<SpoolEntry>(line));
    } catch {
      if (i === body.length - 1) tornLast = true;
      else corruptLines++;
    }
  });
  return { header, entries, tornLast, corruptLines };
}

/** The words a log line uses for what a spool read could not parse ('' when it read whole). */
export function spoolDamage(reads: readonly Pick<SpoolRead, 'tornLast' | 'corruptLines'>[]): string {
  const torn = reads.filter((r) => r.tornLast).length;
  const corrupt = reads.reduce((n, r) => n + r.corruptLines, 0);
  const parts = [
    ...(torn > 0 ? [`${torn} torn last line(s) dropped (a write cut by the crash)`] : []),
    ...(corrupt > 0 ? [`${corrupt} damaged line(s) that do not parse, each a request lost`] : []),
  ];
  return parts.join('; ');
}

/** Marks a spool that could not be handed over, so the agent can join new runs. */
export async function setAside(path: string): Promise<string> {
  const to = `${path}.unsent`;
  await rename(path, to);
  return to;
}
