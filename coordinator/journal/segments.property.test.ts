// Property: a journal's frames split across segments at frame boundaries, each segment padded with
// the zeros it was prepared with, and the log cut anywhere in its last segment (a crash), read back
// as exactly the frames wholly written before the cut, never damage.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventFrame, headerFrame, messageFrame, parseJournal } from './frame.js';
import { parseSegments } from './segments.js';

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;
/** The soak round's runs take ten times as long. */
const TIMEOUT_MS = SOAK > 1 ? 600_000 : undefined;

const HEADER = { run_id: 'r1', agents: [{ agent_id: 'a1', host: 'h1' }] };
const frame = (i: number): Buffer =>
  i % 7 === 6 ? eventFrame({ type: 'stop', reason: `s${i}` }) : messageFrame(i % 3, 'e', Buffer.alloc(i % 90, i));
const pad = (b: Buffer, size: number): Buffer => Buffer.concat([b, Buffer.alloc(size - b.length)]);

describe('reading a journal in preallocated segments', () => {
  it(
    'frames split across zero-padded segments, the log cut anywhere in its last segment, read as a prefix — every frame before the cut',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.nat({ max: 60 }), { minLength: 1, maxLength: 40 }),
          fc.array(fc.nat(), { maxLength: 5 }),
          fc.nat(),
          (ids, splits, cut) => {
            const frames = [headerFrame(HEADER), ...ids.map((i) => frame(i))];
            const bounds = [...new Set(splits.map((s) => 1 + (s % frames.length)))].filter((s) => s < frames.length).sort((x, y) => x - y);
            const groups: Buffer[][] = [];
            let from = 0;
            for (const s of [...bounds, frames.length]) {
              groups.push(frames.slice(from, s));
              from = s;
            }
            const segs = groups.map((g) => Buffer.concat(g));
            const written = Buffer.concat(segs);
            // The crash: the last segment holds only a prefix of its bytes, the rest still zeros.
            const last = segs.length - 1;
            const keep = cut % (segs[last]!.length + 1);
            const files = segs.map((s, i) => pad(i === last ? s.subarray(0, keep) : s, s.length + 100));
            const p = parseSegments(files);
            const all = parseJournal(written).frames;
            const intact =
              groups.slice(0, last).reduce((n, g) => n + g.length, 0) + parseJournal(segs[last]!.subarray(0, keep)).frames.length;
            expect(p.damage).toBeNull();
            expect(p.frames).toEqual(all.slice(0, intact));
          },
        ),
        { numRuns: 500 * SOAK, seed: 11 },
      );
    },
    TIMEOUT_MS,
  );
});
