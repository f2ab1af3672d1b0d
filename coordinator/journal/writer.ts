// The run journal's writer: frames are appended to the journal's segments and made durable in
// groups (group commit, as PostgreSQL's WAL and Kafka's log do it): one write and one fdatasync
// settle every frame of a group. A group is sized by the arrival rate: while frames come closer
// together than the group deadline (2 ms) a group that finds the disk idle waits that long for
// company; at a trickle a frame is flushed at the end of its event-loop turn, alone; frames that
// arrive during a flush form the next group, flushed as soon as it is done (capped by frames and
// bytes). Each segment is written full of zeros and synced before its first frame (segments.ts),
// the next one prepared while the current one fills, so a group's fdatasync overwrites allocated,
// initialized blocks and has no metadata to write (no new size or blocks: on a journalled ext4 no
// journal commit, which in ordered mode would also flush other files' new data). A disk too small
// for a segment is written as before, by appends. A write or flush error (a full disk, an I/O
// error) fails the journal for good: the group in flight and everything after it is refused,
// never reported durable.
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import { failpoint } from '../../shared/failpoints.js';
import { segmentIndex, segmentPath } from './segments.js';

/**
 * When a group is flushed, and the segments it goes to. A group that finds the disk idle waits up
 * to `maxDelayMs` for company — when `adaptive`, only while frames have been coming closer together
 * than that (a frame at a trickle is flushed at the end of its event-loop turn); a group that
 * reaches `maxFrames` or `maxBytes` is flushed at once (the rest forms the next group).
 */
export interface GroupCommit {
  maxDelayMs: number;
  /** Wait `maxDelayMs` only while the observed gap between frames is shorter than it. */
  adaptive?: boolean;
  maxFrames: number;
  maxBytes: number;
  /** Bytes of each segment after the first, written as zeros before use (0: no preallocation, appends). */
  segmentBytes?: number;
  /** Bytes of the first segment (prepared before the header, so kept small: it delays the run's start). */
  firstSegmentBytes?: number;
}

/**
 * Up to 2 ms for company while frames come faster than one per 2 ms (measured: fewer, fuller
 * flushes and a shorter wait than flushing at once), none at a trickle; 256 frames or 4 MiB at
 * most a flush; a first segment of 1 MiB, then 16 MiB segments.
 */
export const DEFAULT_GROUP_COMMIT: GroupCommit = {
  maxDelayMs: 2,
  adaptive: true,
  maxFrames: 256,
  maxBytes: 4 * 1024 * 1024,
  segmentBytes: 16 * 1024 * 1024,
  firstSegmentBytes: 1024 * 1024,
};

/** What the journal has made durable so far. */
export interface JournalStats {
  /** Flushes (one fdatasync each; a group that crosses into the next segment counts once). */
  groups: number;
  frames: number;
  bytes: number;
  /** The largest group, in frames. */
  maxGroupFrames: number;
  /** Total time spent in write + fdatasync, ms. */
  flushMs: number;
  /** Segments written to (the first included). */
  segments: number;
  /** Segments that could not be prepared (a disk too small): the journal went on by appends. */
  unpreparedSegments: number;
  /** Times a segment grew past its prepared end because the next one was not ready yet. */
  grownFlushes: number;
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

/** A segment open for writing: where the next frame goes and how far it may go. */
interface Segment {
  index: number;
  fh: FileHandle;
  /** The next frame's offset. */
  at: number;
  /** Its prepared size: a frame that would cross it goes to the next segment (Infinity: not prepared, appended). */
  end: number;
}

const ZEROS = Buffer.alloc(1024 * 1024);

async function syncDir(path: string): Promise<void> {
  const dir = await open(path, 'r');
  await dir.sync().finally(() => dir.close());
}

// Writes zeros over [from, to) of an open file and syncs it (data and size).
async function zeroFill(fh: FileHandle, from: number, to: number): Promise<void> {
  for (let at = from; at < to; ) {
    const n = Math.min(ZEROS.length, to - at);
    const { bytesWritten } = await fh.write(ZEROS, 0, n, at);
    if (bytesWritten === 0) throw Object.assign(new Error('no bytes written'), { code: 'EIO' });
    at += bytesWritten;
  }
  await fh.sync();
}

/**
 * Segment `index` of the journal at `first`, written full of zeros under a temporary name, synced,
 * renamed into place and its directory synced: a segment either is there whole or not at all.
 * Null when it cannot be prepared (a disk too small for it: the journal goes on by appends).
 */
async function prepareSegment(first: string, index: number, bytes: number): Promise<Segment | null> {
  const path = segmentPath(first, index);
  const tmp = `${path}.prep`;
  let fh: FileHandle | undefined;
  try {
    fh = await open(tmp, 'w+');
    await zeroFill(fh, 0, bytes);
    await rename(tmp, path);
    await syncDir(dirname(first));
    return { index, fh, at: 0, end: bytes };
  } catch {
    await fh?.close().catch(() => {});
    await rm(tmp, { force: true }).catch(() => {});
    return null;
  }
}

/** The journal's segment files after the first, by index (its directory listed). */
async function laterSegments(first: string): Promise<number[]> {
  const names = await readdir(dirname(first)).catch(() => [] as string[]);
  return names
    .map((n) => segmentIndex(basename(first), n))
    .filter((i): i is number => i !== null && i > 0)
    .sort((a, b) => a - b);
}

/** An append-only journal in preallocated segments, with group commit. */
export class JournalWriter {
  readonly stats: JournalStats = {
    groups: 0,
    frames: 0,
    bytes: 0,
    maxGroupFrames: 0,
    flushMs: 0,
    segments: 1,
    unpreparedSegments: 0,
    grownFlushes: 0,
  };
  /** Set once a write or flush failed; every append after it is refused with it. */
  failure: LoadfleetError | null = null;
  private group: Group | null = null;
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  /** When the last frame was appended, and the smoothed gap between frames (ms). */
  private lastAppendMs = 0;
  private gapMs = 1000;
  private closed = false;
  /** The next segment, being prepared while this one fills (null: none is, or none can be). */
  private next: Promise<Segment | null> | null = null;
  /** Whether `next` has settled (prepared, or failed to be). */
  private nextSettled = false;
  /** The current segment has grown past its prepared end while the next one was still being prepared. */
  private growing = false;

  private constructor(
    readonly path: string,
    private seg: Segment,
    private readonly commit: GroupCommit,
    private readonly onFault: (err: LoadfleetError) => void,
  ) {
    this.prepareNext();
  }

  /**
   * Creates the journal at `path` (its first segment prepared, its directory entry flushed). A
   * journal already there is refused: a new run never writes over another's.
   */
  static async open(path: string, onFault: (err: LoadfleetError) => void, commit = DEFAULT_GROUP_COMMIT): Promise<JournalWriter> {
    try {
      await mkdir(dirname(path), { recursive: true });
      if ((await stat(path).catch(() => null))?.size) throw Object.assign(new Error('a journal is already there'), { code: 'EEXIST' });
      const bytes = commit.firstSegmentBytes ?? commit.segmentBytes ?? 0;
      let seg = bytes > 0 ? await prepareSegment(path, 0, bytes) : null;
      if (!seg) {
        const fh = await open(path, 'w');
        await syncDir(dirname(path));
        seg = { index: 0, fh, at: 0, end: Number.POSITIVE_INFINITY };
      }
      const w = new JournalWriter(path, seg, commit, onFault);
      if (bytes > 0 && seg.end === Number.POSITIVE_INFINITY) w.stats.unpreparedSegments++;
      return w;
    } catch (err) {
      throw journalError(path, err);
    }
  }

  /**
   * Reopens a journal a recovery read: cuts it at `goodBytes` (the end of its last valid frame, in
   * its segments laid end to end; a zero or torn tail goes, and so does every later segment) and
   * fsyncs every segment before anything in it is acknowledged again — the stopped process may
   * have written frames it never synced, and only now are they durable. The segment the log ends
   * in is zero-filled back to its size, so the next flush again has no metadata to commit.
   */
  static async reopen(
    path: string,
    goodBytes: number,
    onFault: (err: LoadfleetError) => void,
    commit = DEFAULT_GROUP_COMMIT,
  ): Promise<JournalWriter> {
    let fh: FileHandle | undefined;
    try {
      const indices = [0, ...(await laterSegments(path))];
      const sizes = await Promise.all(indices.map(async (i) => (await stat(segmentPath(path, i))).size));
      // The segment the last valid frame ends in, and where in it.
      let k = 0;
      let start = 0;
      while (k < indices.length - 1 && goodBytes > start + sizes[k]!) start += sizes[k++]!;
      const local = goodBytes - start;
      const later = indices.slice(k + 1);
      fh = await open(segmentPath(path, indices[k]!), 'r+');
      const size = sizes[k]!;
      if (size !== local || later.length > 0) {
        failpoint('recover.truncate');
        await fh.truncate(local);
        for (const i of later) await rm(segmentPath(path, i), { force: true });
      }
      failpoint('recover.reopen');
      for (const i of indices.slice(0, k)) {
        const s = await open(segmentPath(path, i), 'r');
        await s.sync().finally(() => s.close());
      }
      const prepared = size > local && (commit.segmentBytes ?? 0) > 0;
      if (prepared) await zeroFill(fh, local, size);
      else await fh.sync();
      await syncDir(dirname(path));
      return new JournalWriter(path, { index: indices[k]!, fh, at: local, end: prepared ? size : local }, commit, onFault);
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
    // The gap between frames, smoothed over the last few (a burst in one turn counts as 0).
    const now = performance.now();
    this.gapMs += 0.2 * (Math.min(now - this.lastAppendMs, 1000) - this.gapMs);
    this.lastAppendMs = now;
    this.group ??= newGroup();
    const g = this.group;
    g.frames.push(frame);
    g.bytes += frame.length;
    if (g.frames.length >= this.commit.maxFrames || g.bytes >= this.commit.maxBytes) this.kick();
    // Otherwise a flush under way takes this group next, as soon as it is done.
    else if (!this.flushing) this.schedule();
    return g.promise;
  }

  // The disk is idle: the group's flush begins after maxDelayMs, or at the end of this turn when
  // there is no deadline or, adaptive, the frames have been coming further apart than it.
  private schedule(): void {
    const wait = this.commit.adaptive && this.gapMs >= this.commit.maxDelayMs ? 0 : this.commit.maxDelayMs;
    if (wait > 0) this.timer ??= setTimeout(() => this.kick(), wait);
    else this.immediate ??= setImmediate(() => this.kick());
  }

  /** Resolves once everything appended so far is on disk (or the journal failed). */
  async flush(): Promise<void> {
    const g = this.group;
    this.kick();
    await this.flushing;
    if (g) await g.promise.catch(() => {});
  }

  /**
   * Flushes what is left and closes the journal: the zeros after its last frame are cut off and a
   * segment prepared ahead and never used is removed, so a finished journal holds its frames alone.
   */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    const next = await this.next;
    this.next = null;
    if (next) {
      await next.fh.close().catch(() => {});
      await rm(segmentPath(this.path, next.index), { force: true }).catch(() => {});
    }
    if (!this.failure && Number.isFinite(this.seg.end)) await this.seg.fh.truncate(this.seg.at).catch(() => {});
    await this.seg.fh.close().catch(() => {});
  }

  private kick(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.immediate) {
      clearImmediate(this.immediate);
      this.immediate = null;
    }
    this.flushing ??= this.drain().finally(() => {
      this.flushing = null;
      // A frame appended between the drain's last look and now would otherwise wait for company.
      if (this.group && !this.failure) this.schedule();
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
        await this.writeGroup(g.frames);
        failpoint('journal.flush.before-sync');
        await this.seg.fh.datasync();
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

  // Writes a group's frames into the current segment, going on in the next one when a frame would
  // cross its prepared end. What went into the full segment is synced before the next one is
  // written, so a later segment's frames are never on disk ahead of an earlier one's.
  private async writeGroup(frames: Buffer[]): Promise<void> {
    // The segment that outgrew its end while the next was prepared moves on as soon as it can.
    if (this.growing && this.nextSettled) {
      this.growing = false;
      this.seg.end = this.seg.at;
    }
    let rest = frames;
    while (rest.length > 0) {
      let n = 0;
      let bytes = 0;
      while (n < rest.length && this.seg.at + bytes + rest[n]!.length <= this.seg.end) bytes += rest[n++]!.length;
      // A frame larger than a whole segment goes alone into a fresh one, growing it.
      if (n === 0 && this.seg.at === 0) bytes = rest[n++]!.length;
      if (n > 0) {
        await this.writeAll(rest.slice(0, n), this.seg.at);
        this.seg.at += bytes;
        rest = rest.slice(n);
      }
      if (rest.length > 0) await this.nextSegment();
    }
  }

  // The current segment is full: synced and closed, and the one prepared ahead takes its place; the
  // one after it begins to be prepared. None prepared (a disk too small): the current one grows. The
  // next one still being prepared (a slow disk): the current one grows meanwhile — a flush is never
  // held behind 16 MiB of zeros; those few groups commit metadata as an appended journal did.
  private async nextSegment(): Promise<void> {
    if (this.next && !this.nextSettled) {
      this.growing = true;
      this.seg.end = Number.POSITIVE_INFINITY;
      this.stats.grownFlushes++;
      return;
    }
    const next = await this.next;
    this.next = null;
    if (!next) {
      this.seg.end = Number.POSITIVE_INFINITY;
      return;
    }
    if (this.seg.at > 0) await this.seg.fh.datasync();
    await this.seg.fh.close();
    this.seg = next;
    this.stats.segments++;
    this.prepareNext();
  }

  private prepareNext(): void {
    const bytes = this.commit.segmentBytes ?? 0;
    if (bytes <= 0 || !Number.isFinite(this.seg.end)) return;
    this.nextSettled = false;
    this.next = prepareSegment(this.path, this.seg.index + 1, bytes).then((s) => {
      this.nextSettled = true;
      if (!s) this.stats.unpreparedSegments++;
      return s;
    });
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
  private async writeAll(frames: Buffer[], at: number): Promise<void> {
    let bufs = frames;
    let pos = at;
    while (bufs.length > 0) {
      const { bytesWritten } = await this.seg.fh.writev(bufs, pos);
      pos += bytesWritten;
      let left = bytesWritten;
      let i = 0;
      while (i < bufs.length && left >= bufs[i]!.length) left -= bufs[i++]!.length;
      bufs = bufs.slice(i);
      if (left > 0 && bufs.length > 0) bufs[0] = bufs[0]!.subarray(left);
      if (bytesWritten === 0 && bufs.length > 0) throw Object.assign(new Error('no bytes written'), { code: 'EIO' });
    }
  }
}
