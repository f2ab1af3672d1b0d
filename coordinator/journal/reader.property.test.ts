// Property: whatever is cut from the journal's end, however many zeros follow, and whatever bytes
// are changed, the reader returns a prefix of the frames written — frame for frame, ending at a
// frame's end — never a wrong frame; untouched frames are all read; and without a changed byte
// there is never damage (a cut and zeros are the log's end).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JournalFrame } from './frame.js';
import { eventFrame, headerFrame, messageFrame, parseJournal } from './frame.js';

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;
/** The soak round's runs take ten times as long. */
const TIMEOUT_MS = SOAK > 1 ? 600_000 : undefined;

const HEADER = { run_id: 'r1', agents: [{ agent_id: 'a1', host: 'h1' }] };

// A run's frames as written, their bytes, and where each frame ends.
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

const payloads = fc.array(fc.uint8Array({ minLength: 0, maxLength: 300 }), { minLength: 0, maxLength: 40 });

describe('the journal reader on any truncation, zero tail or corruption', () => {
  it(
    'property: any truncation, zero tail or corruption of what was written reads as a prefix of the frames written, never a wrong frame',
    () => {
      fc.assert(
        fc.property(
          payloads,
          fc.nat(),
          fc.nat({ max: 9000 }),
          fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { maxLength: 4 }),
          (ps, cutAt, zeros, flips) => {
            const { frames, bytes, ends } = written(ps);
            const file = Buffer.concat([bytes.subarray(0, cutAt % (bytes.length + 1)), Buffer.alloc(zeros)]);
            for (const [pos, x] of flips) if (file.length > 0) file[pos % file.length] = file[pos % file.length]! ^ x;
            const p = parseJournal(file);
            // A prefix: frame for frame what was written, and goodBytes at a frame's end.
            expect(p.frames).toEqual(frames.slice(0, p.frames.length));
            expect(p.goodBytes === 0 || ends.includes(p.goodBytes)).toBe(true);
            expect(p.goodBytes + p.tornTailBytes).toBeLessThanOrEqual(file.length);
            // Untouched bytes lose nothing: every frame wholly before the cut and the first flip is read.
            const firstFlip = flips.length === 0 || file.length === 0 ? file.length : Math.min(...flips.map(([pos]) => pos % file.length));
            const intact = Math.min(cutAt % (bytes.length + 1), firstFlip);
            expect(p.frames.length).toBeGreaterThanOrEqual(ends.filter((e) => e <= intact).length);
            // Without corruption there is never damage: a cut and zeros are the log's end.
            if (flips.length === 0) expect(p.damage).toBeNull();
          },
        ),
        { numRuns: 2000 * SOAK, seed: 7 },
      );
    },
    TIMEOUT_MS,
  );
});
