import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../shared/errors.js';
import type { JournalFrame } from './frame.js';
import { eventFrame, headerFrame, messageFrame, parseJournal } from './frame.js';
import { readJournal, setAsidePaths } from './reader.js';
import { journalPath, RunJournal } from './run-journal.js';

const HEADER = { run_id: 'r1', agents: [{ agent_id: 'a1', host: 'h1' }] };

// A run's frames as written, and their bytes.
function written(payloads: readonly Uint8Array[]): { frames: JournalFrame[]; bytes: Buffer; ends: number[] } {
  const bufs = [
    headerFrame(HEADER),
    ...payloads.map((p, i) => (i % 5 === 4 ? eventFrame({ type: 'stop', reason: `r${i}` }) : messageFrame(i % 3, 'e', p))),
  ];
  const ends: number[] = [];
  let at = 0;
  for (const b of bufs) {
    at += b.length;
    ends.push(at);
  }
  const bytes = Buffer.concat(bufs);
  return { frames: parseJournal(bytes).frames, bytes, ends };
}

describe('reading a journal up to its last valid frame', () => {
  it('a zero tail of any length after whole frames is the end: every frame read, the zeros counted', () => {
    const { frames, bytes } = written([Buffer.from('a'), Buffer.from('bb'), Buffer.from('ccc')]);
    for (const zeros of [1, 7, 8, 9, 4096, 8192]) {
      const p = parseJournal(Buffer.concat([bytes, Buffer.alloc(zeros)]));
      expect(p).toMatchObject({ goodBytes: bytes.length, tornTailBytes: zeros, zeroTailBytes: zeros, damage: null });
      expect(p.frames).toEqual(frames);
    }
  });

  it('a frame cut short, then zeros (its data blocks never written): the end, with the frames before it', () => {
    const { frames, bytes, ends } = written([Buffer.alloc(200, 1), Buffer.alloc(200, 2)]);
    const cut = Buffer.concat([bytes.subarray(0, ends[1]! + 20), Buffer.alloc(8192)]);
    const p = parseJournal(cut);
    expect(p.frames).toEqual(frames.slice(0, 2));
    expect(p).toMatchObject({ goodBytes: ends[1], tornTailBytes: 20 + 8192, zeroTailBytes: 8192, damage: null });
  });

  it('zeros over a frame in the middle, with whole frames after it: damage, not a tail', () => {
    const { frames, bytes, ends } = written([Buffer.alloc(50, 1), Buffer.alloc(50, 2), Buffer.alloc(50, 3)]);
    const holed = Buffer.from(bytes);
    holed.fill(0, ends[1]!, ends[2]!);
    const p = parseJournal(holed);
    expect(p.frames).toEqual(frames.slice(0, 2));
    expect(p.damage).toBe(`a frame of length 0 at byte ${ends[1]}`);
    expect(p.resumesAt).toBe(ends[2]);
  });
});

describe('a recovery reading a run directory', () => {
  const runDir = (): string => {
    const d = join(mkdtempSync(join(tmpdir(), 'lf-reader-')), '20261207T000000Z-p-0001');
    mkdirSync(d, { recursive: true });
    return d;
  };

  it('a journal ending in 8 KiB of zeros: read to its last frame, the tail counted; reopening cuts it and syncs', async () => {
    const dir = runDir();
    const j = await RunJournal.open(dir, HEADER, () => {});
    for (let i = 0; i < 10; i++) await j.message(0, 'e', Buffer.from(`m${i}`));
    await j.close();
    const good = readFileSync(journalPath(dir));
    writeFileSync(journalPath(dir), Buffer.concat([good, Buffer.alloc(8192)]));
    const read = await readJournal(dir, 'guess');
    expect(read.frames).toHaveLength(10);
    expect(read).toMatchObject({ goodBytes: good.length, tornTailBytes: 8192, zeroTailBytes: 8192, header: HEADER });
    // Reading changed nothing; reopening cuts the tail, and what is appended follows the last frame.
    expect(readFileSync(journalPath(dir)).length).toBe(good.length + 8192);
    const again = await RunJournal.reopen(dir, read.goodBytes, () => {});
    await again.message(1, 'e', Buffer.from('after'));
    await again.close();
    const p = parseJournal(readFileSync(journalPath(dir)));
    expect(p.damage).toBeNull();
    expect(p.tornTailBytes).toBe(0);
    expect(p.frames).toHaveLength(12);
  });

  it('damage before the last valid frame: set aside with a reason naming the agents and their spools, exit 2 once, and the same error names where it went', async () => {
    const dir = runDir();
    const j = await RunJournal.open(dir, HEADER, () => {});
    for (let i = 0; i < 10; i++) await j.message(0, 'e', Buffer.alloc(100, i));
    await j.close();
    const bytes = readFileSync(journalPath(dir));
    bytes[bytes.length - 500] = bytes[bytes.length - 500]! ^ 0x55;
    writeFileSync(journalPath(dir), bytes);
    const err = (await readJournal(dir, 'guess').catch((e: unknown) => e)) as { code: string; message: string; details: string[] };
    expect(err.code).toBe(ErrorCode.JOURNAL_UNREADABLE);
    expect(err.message).toMatch(
      /is damaged before its end: a frame failing its checksum at byte \d+, and a valid frame follows at byte \d+/,
    );
    expect(err.details.join('\n')).toContain('agent a1 on h1: <--spool-dir>/a1.r1*.spool.ndjson');
    const aside = setAsidePaths(dir);
    expect(readFileSync(aside.journal)).toEqual(bytes);
    expect(readFileSync(aside.reason, 'utf8')).toContain('agent a1 on h1');
    // The run directory holds no journal any more: a second read says where it went.
    await expect(readJournal(dir, 'guess')).rejects.toThrow(`was set aside as damaged: ${aside.journal}`);
  });
});
