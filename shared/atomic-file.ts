// Atomic artifact writes: everything goes to a temporary name and is renamed into place, so a
// reader never sees half a file and an interrupted run leaves either the old file or the new one.
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { failpoint } from './failpoints.js';

/** Writes `data` to `path` through a temporary file and a rename. */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  failpoint('rundir.write', basename(path));
  await writeFile(tmp, data);
  failpoint('rundir.rename.before', basename(path));
  await rename(tmp, path);
  failpoint('rundir.rename.after', basename(path));
}

/** A line-oriented file streamed to a temporary name, renamed into place on close. */
export class AtomicLineStream {
  private readonly tmp: string;
  private readonly out: WriteStream;
  private readonly failed: Promise<never>;

  constructor(private readonly path: string) {
    this.tmp = `${path}.tmp-${process.pid}`;
    this.out = createWriteStream(this.tmp);
    this.failed = new Promise((_r, reject) => this.out.on('error', reject));
    this.failed.catch(() => {});
  }

  /** Appends text (the caller adds newlines); buffered by the stream. */
  write(text: string): void {
    this.out.write(text);
  }

  /** Flushes, closes and renames into place. */
  async close(): Promise<void> {
    await Promise.race([new Promise<void>((r) => this.out.end(() => r())), this.failed]);
    failpoint('rundir.rename.before', basename(this.path));
    await rename(this.tmp, this.path);
    failpoint('rundir.rename.after', basename(this.path));
  }
}
