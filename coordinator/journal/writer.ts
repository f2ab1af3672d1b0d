// The run journal's writer: frames are appended to one file in the run directory and made durable
// in groups (group commit, as PostgreSQL's WAL and Kafka's log do it): a group is written and
// fdatasync'ed once, every few milliseconds or every N frames, whichever comes first, and one flush
// settles every frame in it. Frames that arrive while a flush is under way form the next group, so
// the cost of a flush is shared by everything that arrived during the previous one. A write or
// flush error (a full disk, an I/O error) fails the journal for good: the group in flight and
// everything after it is refused, never reported durable.
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import { failpoint } from '../../shared/failpoints.js';

/** When a group is flushed: after `maxDelayMs` from its first frame, or once it holds `maxFrames` or `maxBytes`. */
export interface GroupCommit {
  maxDelayMs: number;
  maxFrames: number;
  maxBytes: number;
}

/**
 * 2 ms: a group waits at most that long for company before its flush begins (a flush itself takes
 * 0.05–10 ms depending on the disk); 256 frames or 4 MiB flush at once.
 */
export const DEFAULT_GROUP_COMMIT: GroupCommit = { maxDelayMs: 2, maxFrames: 256, maxBytes: 4 * 1024 * 1024 };

/** What the journal has made durable so far. */
export interface JournalStats {
  /** Flushes (one fdatasync each). */
  groups: number;
  frames: number;
  bytes: number;
  /** The largest group, in frames. */
  maxGroupFrames: number;
  /** Total time spent in write + fdatasync, ms. */
  flushMs: number;
}

interface Group {
  frames: Buffer[];
  bytes: number;
  promise: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

function newGroup(): Group {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((a, b) => {
    resolve = a;
    reject = b;
  });
  // A group nobody waits on must not surface as an unhandled rejection; waiters still see it.
  promise.catch(() => {});
  return { frames: [], bytes: 0, promise, resolve, reject };
}

/** The error a failed write or flush becomes: names the file and the errno. */
export function journalError(path: string, err: unknown): LoadfleetError {
  const e = err as NodeJS.ErrnoException;
  const errno = e.code ?? 'EIO';
  return new LoadfleetError(
    ErrorCode.JOURNAL_WRITE,
    `could not write the run's journal ${path}: ${errno} (${e.message}); nothing after its last flush was acknowledged, and the agents keep it in their spools`,
    { exitCode: ExitCode.FAILURE, cause: errno },
  );
}

/** An append-only journal file with group commit. */
export class JournalWriter {
  readonly stats: JournalStats = { groups: 0, frames: 0, bytes: 0, maxGroupFrames: 0, flushMs: 0 };
  /** Set once a write or flush failed; every append after it is refused with it. */
  failure: LoadfleetError | null = null;
  private group: Group | null = null;
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly fh: FileHandle,
    private readonly commit: GroupCommit,
    private readonly onFault: (err: LoadfleetError) => void,
  ) {}

  /** Creates (or appends to) the journal at `path`; the new file's directory entry is flushed too. */
  static async open(path: string, onFault: (err: LoadfleetError) => void, commit = DEFAULT_GROUP_COMMIT): Promise<JournalWriter> {
    try {
      await mkdir(dirname(path), { recursive: true });
      const fh = await open(path, 'a');
      const dir = await open(dirname(path), 'r');
      await dir.sync().finally(() => dir.close());
      return new JournalWriter(path, fh, commit, onFault);
    } catch (err) {
      throw journalError(path, err);
    }
  }

  /**
   * Reopens a journal a recovery read: cuts it to `goodBytes` (the end of its last valid frame; a
   * zero or torn tail goes) and fsyncs the whole file before anything in it is acknowledged again —
   * the stopped process may have written frames it never synced, and only now are they durable.
   */
  static async reopen(
    path: string,
    goodBytes: number,
    onFault: (err: LoadfleetError) => void,
    commit = DEFAULT_GROUP_COMMIT,
  ): Promise<JournalWriter> {
    let fh: FileHandle | undefined;
    try {
      fh = await open(path, 'r+');
      if ((await fh.stat()).size !== goodBytes) {
        failpoint('recover.truncate');
        await fh.truncate(goodBytes);
      }
      await fh.close();
      fh = await open(path, 'a');
      failpoint('recover.reopen');
      await fh.sync();
      return new JournalWriter(path, fh, commit, onFault);
    } catch (err) {
      await fh?.close().catch(() => {});
      throw journalError(path, err);
    }
  }

  /** Appends one frame; resolves once it is on disk (with its whole group), rejects if it never will be. */
  append(frame: Buffer): Promise<void> {
    try {
      failpoint('journal.append');
    } catch (err) {
      this.fail(err);
    }
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error(`the journal ${this.path} is closed`));
    this.group ??= newGroup();
    const g = this.group;
    g.frames.push(frame);
    g.bytes += frame.length;
    if (g.frames.length >= this.commit.maxFrames || g.bytes >= this.commit.maxBytes) this.kick();
    else this.timer ??= setTimeout(() => this.kick(), this.commit.maxDelayMs);
    return g.promise;
  }

  /** Resolves once everything appended so far is on disk (or the journal failed). */
  async flush(): Promise<void> {
    const g = this.group;
    this.kick();
    await this.flushing;
    if (g) await g.promise.catch(() => {});
  }

  /** Flushes what is left and closes the file. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    await this.fh.close().catch(() => {});
  }

  private kick(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.flushing ??= this.drain().finally(() => {
      this.flushing = null;
    });
  }

  // Flushes group after group until none is waiting: frames that came during a flush go next.
  private async drain(): Promise<void> {
    while (this.group && !this.failure) {
      const g = this.group;
      this.group = null;
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      }
      const t0 = performance.now();
      try {
        failpoint('journal.flush.before-write');
        await this.writeAll(g.frames);
        failpoint('journal.flush.before-sync');
        await this.fh.datasync();
        failpoint('journal.flush.after-sync');
      } catch (err) {
        g.reject(this.fail(err));
        return;
      }
      this.stats.flushMs += performance.now() - t0;
      this.stats.groups++;
      this.stats.frames += g.frames.length;
      this.stats.bytes += g.bytes;
      if (g.frames.length > this.stats.maxGroupFrames) this.stats.maxGroupFrames = g.frames.length;
      g.resolve();
    }
  }

  // The journal fails for good: the groups waiting are refused, and the fault is heard once.
  private fail(err: unknown): LoadfleetError {
    if (this.failure) return this.failure;
    this.failure = journalError(this.path, err);
    this.group?.reject(this.failure);
    this.group = null;
    this.onFault(this.failure);
    return this.failure;
  }

  // A vectored write may be short (a full disk part-way): what is left is written again, so the
  // error that stops it is the disk's own.
  private async writeAll(frames: Buffer[]): Promise<void> {
    let bufs = frames;
    while (bufs.length > 0) {
      const { bytesWritten } = await this.fh.writev(bufs);
      let left = bytesWritten;
      let i = 0;
      while (i < bufs.length && left >= bufs[i]!.length) left -= bufs[i++]!.length;
      bufs = bufs.slice(i);
      if (left > 0 && bufs.length > 0) bufs[0] = bufs[0]!.subarray(left);
      if (bytesWritten === 0 && bufs.length > 0) throw Object.assign(new Error('no bytes written'), { code: 'EIO' });
    }
  }
}
