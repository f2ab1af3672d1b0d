import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../shared/errors.js';
import { eventFrame, headerFrame, messageFrame, parseJournal } from './frame.js';
import { journalPath, RunJournal } from './run-journal.js';
import { JournalWriter } from './writer.js';

const dir = (): string => mkdtempSync(join(tmpdir(), 'lf-journal-'));

describe('journal frames', () => {
  const bytes = Buffer.concat([
    headerFrame({ run_id: 'r', start_ns: 123n }),
    messageFrame(2, 'epoch-a', Buffer.from([1, 2, 3])),
    eventFrame({ type: 'stop', reason: 'why' }),
  ]);

  it('round-trip: header (bigints kept), message (agent, epoch, bytes), event', () => {
    const p = parseJournal(bytes);
    expect(p.damage).toBeNull();
    expect(p.tornTailBytes).toBe(0);
    expect(p.frames).toEqual([
      { kind: 'header', header: { run_id: 'r', start_ns: 123n } },
      { kind: 'message', message: { agent: 2, epoch: 'epoch-a', raw: Buffer.from([1, 2, 3]) } },
      { kind: 'event', event: { type: 'stop', reason: 'why' } },
    ]);
  });

  it('a last frame cut short at any byte is a torn tail: the frames before it stand', () => {
    const whole = parseJournal(bytes);
    const lastStart = bytes.length - eventFrame({ type: 'stop', reason: 'why' }).length;
    for (let cut = lastStart + 1; cut < bytes.length; cut++) {
      const p = parseJournal(bytes.subarray(0, cut));
      expect(p.frames).toEqual(whole.frames.slice(0, 2));
      expect(p.tornTailBytes).toBe(cut - lastStart);
      expect(p.damage).toBeNull();
    }
    // Zeros where the tail's data should be (a length written ahead of its data): torn, not damage.
    const zeroed = Buffer.from(bytes);
    zeroed.fill(0, lastStart + 8);
    expect(parseJournal(zeroed)).toMatchObject({ tornTailBytes: bytes.length - lastStart, damage: null });
  });

  it('a damaged frame followed by a valid one is damage: named with its offset, nothing after it read', () => {
    const second = headerFrame({ run_id: 'r', start_ns: 123n }).length;
    const bad = Buffer.from(bytes);
    bad.writeUInt8(bad.readUInt8(second + 12) ^ 0xff, second + 12); // inside the message frame, which is not the last
    const p = parseJournal(bad);
    expect(p.frames).toHaveLength(1);
    expect(p.damage).toBe(`a frame failing its checksum at byte ${second}`);
    expect(p.resumesAt).toBe(bytes.length - eventFrame({ type: 'stop', reason: 'why' }).length);
    expect(p.tornTailBytes).toBe(0);
  });
});

describe('journal writer', () => {
  it('group commit: 2,000 appends settle in far fewer flushes, every frame on disk in order', async () => {
    const d = dir();
    const faults: Error[] = [];
    const w = await JournalWriter.open(join(d, 'j'), (e) => faults.push(e), { maxDelayMs: 2, maxFrames: 256, maxBytes: 1 << 22 });
    const done: number[] = [];
    const all = Array.from({ length: 2000 }, (_, i) => w.append(messageFrame(0, 'e', Buffer.from(String(i)))).then(() => done.push(i)));
    await Promise.all(all);
    await w.close();
    expect(faults).toEqual([]);
    expect(done).toEqual([...done].sort((a, b) => a - b)); // flushes settle in order
    expect(w.stats.frames).toBe(2000);
    expect(w.stats.groups).toBeLessThanOrEqual(2000 / 100);
    expect(w.stats.maxGroupFrames).toBeGreaterThan(1);
    const p = parseJournal(readFileSync(join(d, 'j')));
    expect(p.frames.map((f) => (f.kind === 'message' ? Buffer.from(f.message.raw).toString() : ''))).toEqual(
      Array.from({ length: 2000 }, (_, i) => String(i)),
    );
  });

  it('a lone frame is flushed within its delay, not held for company', async () => {
    const w = await JournalWriter.open(join(dir(), 'j'), () => {}, { maxDelayMs: 2, maxFrames: 256, maxBytes: 1 << 22 });
    const t0 = performance.now();
    await w.append(eventFrame({ type: 'closing', at_s: 1 }));
    expect(performance.now() - t0).toBeLessThan(500);
    await w.close();
  });
});

// A results disk that fills up: a 192 KiB tmpfs (root only: mount), unmounted afterwards.
const root = process.getuid?.() === 0;
describe.skipIf(!root)('a journal on a full disk', () => {
  const mnt = dir();
  let mounted = false;
  afterAll(() => {
    if (mounted) execFileSync('umount', [mnt]);
  });

  it('ENOSPC: the failing group and everything after it is refused, named with the path and errno; what was flushed stays readable', async () => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=192k', 'tmpfs', mnt]);
    mounted = true;
    const runDir = join(mnt, 'run');
    mkdirSync(runDir);
    const faults: Error[] = [];
    const j = await RunJournal.open(runDir, { run_id: 'r' }, (e) => faults.push(e));
    const row = Buffer.alloc(4096, 7);
    const settled: ('durable' | 'refused')[] = [];
    let i = 0;
    // Appended one group at a time until the disk is full (about 48 frames of 4 KiB fit).
    while (faults.length === 0 && i < 200) {
      const batch = Array.from({ length: 8 }, () =>
        j.message(0, 'e', row).then(
          () => void settled.push('durable'),
          () => void settled.push('refused'),
        ),
      );
      i += 8;
      await Promise.all(batch);
    }
    expect(faults).toHaveLength(1);
    const err = faults[0] as Error & { code: string };
    expect(err.code).toBe(ErrorCode.JOURNAL_WRITE);
    expect(err.message).toContain(journalPath(runDir));
    expect(err.message).toContain('ENOSPC');
    await expect(j.message(0, 'e', row)).rejects.toThrow('ENOSPC');
    // Refusals come only after every durable frame: no acknowledgement past the failure.
    const firstRefused = settled.indexOf('refused');
    expect(firstRefused).toBeGreaterThan(0);
    expect(settled.slice(firstRefused).every((x) => x === 'refused')).toBe(true);
    const durable = firstRefused;
    await j.close();
    const p = parseJournal(readFileSync(journalPath(runDir)));
    expect(p.damage).toBeNull();
    // Every frame reported durable is there (a torn partial group after them may be too).
    expect(p.frames.filter((f) => f.kind === 'message').length).toBeGreaterThanOrEqual(durable);
  });
});

describe('retire', () => {
  it('flushes the run directory and removes the journal', async () => {
    const d = dir();
    writeFileSync(join(d, 'run.json'), '{}');
    const j = await RunJournal.open(d, { run_id: 'r' }, () => {});
    await j.retire(d);
    expect(() => readFileSync(journalPath(d))).toThrow();
    expect(readFileSync(join(d, 'run.json'), 'utf8')).toBe('{}');
  });
});
