import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventFrame, headerFrame, messageFrame, parseJournal } from './frame.js';
import { journalSegments, readJournal } from './reader.js';
import { journalPath, RunJournal } from './run-journal.js';
import { parseSegments, segmentIndex, segmentPath } from './segments.js';

const HEADER = { run_id: 'r1', agents: [{ agent_id: 'a1', host: 'h1' }] };
const frame = (i: number): Buffer =>
  i % 7 === 6 ? eventFrame({ type: 'stop', reason: `s${i}` }) : messageFrame(i % 3, 'e', Buffer.alloc(i % 90, i));
const pad = (b: Buffer, size: number): Buffer => Buffer.concat([b, Buffer.alloc(size - b.length)]);

describe('segment names', () => {
  it('the first segment is the journal file itself, later ones numbered; set-aside and temporary files are no segment', () => {
    expect(segmentPath('/d/run.journal', 0)).toBe('/d/run.journal');
    expect(segmentPath('/d/run.journal', 12)).toBe('/d/run.journal-000012');
    expect(segmentIndex('run.journal', 'run.journal')).toBe(0);
    expect(segmentIndex('run.journal', 'run.journal-000012')).toBe(12);
    for (const n of ['run.journal.damaged', 'run.journal-000001.prep', 'run.journal-000001.damaged', 'run.journal-1', 'x'])
      expect(segmentIndex('run.journal', n)).toBeNull();
  });
});

describe('reading a journal in preallocated segments', () => {
  it('one segment written part way (frames, then the zeros it was prepared with): every frame, the zeros its end', () => {
    const bytes = Buffer.concat([headerFrame(HEADER), frame(1), frame(2)]);
    const p = parseSegments([pad(bytes, 65536)]);
    expect(p.frames).toEqual(parseJournal(bytes).frames);
    expect(p).toMatchObject({
      goodBytes: bytes.length,
      tornTailBytes: 65536 - bytes.length,
      zeroTailBytes: 65536 - bytes.length,
      damage: null,
    });
  });

  it("three segments: each one's zero end passed over, the last frame in the second, the third prepared and unused", () => {
    const a = Buffer.concat([headerFrame(HEADER), frame(1), frame(2)]);
    const b = Buffer.concat([frame(3), frame(4)]);
    const p = parseSegments([pad(a, 1024), pad(b, 2048), Buffer.alloc(2048)]);
    expect(p.frames).toEqual(parseJournal(Buffer.concat([a, b])).frames);
    expect(p).toMatchObject({
      goodBytes: 1024 + b.length,
      tornTailBytes: 2048 - b.length + 2048,
      zeroTailBytes: 2048 - b.length + 2048,
      damage: null,
      segments: 3,
    });
  });

  it('a segment ending in a torn frame, or holding no frame, before a segment with frames: damage, not a tail', () => {
    const a = Buffer.concat([headerFrame(HEADER), frame(1)]);
    const torn = Buffer.concat([a, frame(2).subarray(0, 5)]);
    const b = frame(3);
    const p = parseSegments([pad(torn, 512), pad(b, 512)]);
    expect(p.frames).toEqual(parseJournal(a).frames);
    expect(p.damage).toBe(`5 bytes of a frame cut short at byte ${a.length} of segment 0, and a later segment holds frames`);
    expect(p.resumesAt).toBe(512);
    const q = parseSegments([pad(a, 512), Buffer.alloc(512), pad(b, 512)]);
    expect(q.damage).toBe('a segment holding no frame at byte 0 of segment 1, and a later segment holds frames');
    // A damaged frame inside a segment is named with its segment.
    const flipped = pad(Buffer.concat([a, frame(2), frame(4)]), 512);
    flipped[a.length + 10] = flipped[a.length + 10]! ^ 0x33;
    expect(parseSegments([flipped, pad(b, 512)]).damage).toBe(`a frame failing its checksum at byte ${a.length} of segment 0`);
  });
});

describe('the writer across segments', () => {
  const runDir = (): string => {
    const d = join(mkdtempSync(join(tmpdir(), 'lf-seg-')), 'run');
    mkdirSync(d, { recursive: true });
    return d;
  };
  const commit = { maxDelayMs: 0, maxFrames: 16, maxBytes: 1 << 20, segmentBytes: 8192, firstSegmentBytes: 4096 };

  it('fills prepared segments in order (each its prepared size while written), prepares the next ahead, reads back whole; close cuts the zeros', async () => {
    const dir = runDir();
    const j = await RunJournal.open(dir, HEADER, () => {}, commit);
    // The first segment exists at its prepared size before any frame: the header goes into zeros.
    expect(statSync(journalPath(dir)).size).toBe(4096);
    const payloads = Array.from({ length: 600 }, (_, i) => Buffer.alloc(20 + (i % 50), i));
    // In rounds, with a pause for the next segment's preparation (without it a flush goes on growing the current one).
    for (let k = 0; k < payloads.length; k += 50) {
      await Promise.all(payloads.slice(k, k + 50).map((p) => j.message(0, 'e', p)));
      await new Promise((r) => setTimeout(r, 40));
    }
    expect(j.stats.segments).toBeGreaterThan(3);
    await new Promise((r) => setTimeout(r, 300)); // the next segment's preparation, under way off the flush path
    const segs = await journalSegments(dir);
    // Every segment written to, and one prepared ahead, at its prepared size: no flush grew a file.
    expect(segs).toEqual(Array.from({ length: j.stats.segments + 1 }, (_, i) => i));
    // A segment grows past its end only when a flush found the next one still being prepared.
    const sizes = segs.map((i) => statSync(segmentPath(journalPath(dir), i)).size);
    const prepared = segs.map((i) => (i === 0 ? 4096 : 8192));
    expect(sizes.filter((n, k) => n !== prepared[k]).length).toBeLessThanOrEqual(j.stats.grownFlushes);
    expect(sizes.every((n, k) => n >= prepared[k]!)).toBe(true);
    // Read as a recovery would, before the journal is closed (a crash now).
    const crashed = await readJournal(dir, 'guess');
    expect(crashed.frames.map((f) => (f.kind === 'message' ? Buffer.from(f.message.raw) : null))).toEqual(payloads);
    expect(crashed.zeroTailBytes).toBe(crashed.tornTailBytes);
    await j.close();
    // Closed: the prepared, unused segment removed, the last one cut to its last frame.
    expect(await journalSegments(dir)).toEqual(segs.slice(0, -1));
    const read = await readJournal(dir, 'guess');
    expect(read.frames).toEqual(crashed.frames);
    expect(read.tornTailBytes).toBe(0);
    expect(readdirSync(join(dir, 'journal')).filter((n) => n.endsWith('.prep'))).toEqual([]);
  });

  it('reopened after a crash: cut at the last frame (later segments removed), the segment zero-filled back, appends follow in order', async () => {
    const dir = runDir();
    const j = await RunJournal.open(dir, HEADER, () => {}, commit);
    const first = Array.from({ length: 200 }, (_, i) => Buffer.alloc(30, i));
    await Promise.all(first.map((p) => j.message(0, 'e', p)));
    await j.flush();
    // A crash: the writer abandoned open (its next segment prepared by now), a torn frame after the last whole one.
    await new Promise((r) => setTimeout(r, 300));
    const last = (await journalSegments(dir)).filter((i) => statSync(segmentPath(journalPath(dir), i)).size > 0).at(-2)!;
    const torn = frame(5).subarray(0, 9);
    const lastFile = segmentPath(journalPath(dir), last);
    const parsed = parseJournal(readFileSync(lastFile));
    writeFileSync(
      lastFile,
      Buffer.concat([
        readFileSync(lastFile).subarray(0, parsed.goodBytes),
        torn,
        readFileSync(lastFile).subarray(parsed.goodBytes + torn.length),
      ]),
    );
    const read = await readJournal(dir, 'guess');
    const again = await RunJournal.reopen(dir, read.goodBytes, () => {}, commit);
    const second = Array.from({ length: 200 }, (_, i) => Buffer.alloc(25, 255 - i));
    await Promise.all(second.map((p) => again.message(1, 'e', p)));
    await again.close();
    const all = await readJournal(dir, 'guess');
    expect(all.frames.map((f) => (f.kind === 'message' ? Buffer.from(f.message.raw) : null))).toEqual([...first, ...second]);
    expect(read.tornTailBytes - read.zeroTailBytes).toBeGreaterThanOrEqual(9);
  });
});
