// The journal's segments (pure: no I/O). The journal is a run of files, each written full of zeros
// before its first frame (so a group's fdatasync overwrites allocated, initialized blocks and has no
// metadata to commit), filled in order: `run.journal`, then `run.journal-000001`, … A segment's
// zeros after its last frame are its normal end; the writer moves on to the next one only after
// everything in it is synced, so frames in a later segment after a torn (not merely zero) end of
// an earlier one are damage, not a tail.
import type { JournalFrame, ParsedJournal } from './frame.js';
import { parseJournal } from './frame.js';

/** The file of segment `index` of the journal whose first segment is `first`. */
export function segmentPath(first: string, index: number): string {
  return index === 0 ? first : `${first}-${String(index).padStart(6, '0')}`;
}

/** The segment index a file name in the journal's directory stands for, or null (set aside, temporary, another file). */
export function segmentIndex(firstName: string, name: string): number | null {
  if (name === firstName) return 0;
  if (!name.startsWith(`${firstName}-`)) return null;
  const digits = name.slice(firstName.length + 1);
  return /^\d{6,}$/.test(digits) ? Number(digits) : null;
}

/** What a journal's segments held, read one after another. */
export interface ParsedSegments extends ParsedJournal {
  /** How many segments were read. */
  segments: number;
}

/**
 * Parses a journal's segments in order. Positions (`goodBytes`, `resumesAt`) are offsets into the
 * segments laid end to end, each at its whole size. The log ends at the last valid frame; what
 * follows it (the rest of its segment, later segments holding no frame) is its tail. A segment that
 * ends in anything but zeros, or holds no frame, while a later one holds frames, is damage.
 */
export function parseSegments(segments: readonly Uint8Array[]): ParsedSegments {
  const parsed = segments.map((s) => parseJournal(s));
  const frames: JournalFrame[] = [];
  let offset = 0;
  let last = -1;
  parsed.forEach((p, i) => {
    if (p.frames.length > 0 || p.damage) last = i;
  });
  for (let i = 0; i < parsed.length; i++) {
    const p = parsed[i]!;
    frames.push(...p.frames);
    if (p.damage)
      return {
        frames,
        goodBytes: offset + p.goodBytes,
        tornTailBytes: 0,
        zeroTailBytes: 0,
        damage: segments.length > 1 ? `${p.damage} of segment ${i}` : p.damage,
        resumesAt: offset + p.resumesAt!,
        segments: segments.length,
      };
    const notZero = p.tornTailBytes - p.zeroTailBytes;
    if (i < last && (notZero > 0 || p.frames.length === 0)) {
      const why = p.frames.length === 0 ? 'a segment holding no frame' : `${notZero} bytes of a frame cut short`;
      const nextStart = offset + segments[i]!.length;
      return {
        frames,
        goodBytes: offset + p.goodBytes,
        tornTailBytes: 0,
        zeroTailBytes: 0,
        damage: `${why} at byte ${p.goodBytes} of segment ${i}, and a later segment holds frames`,
        resumesAt: nextStart,
        segments: segments.length,
      };
    }
    if (i === Math.max(last, 0)) {
      const goodBytes = offset + p.goodBytes;
      let zeroTailBytes = p.zeroTailBytes;
      let total = offset;
      for (let k = i; k < segments.length; k++) total += segments[k]!.length;
      for (let k = i + 1; k < parsed.length; k++) zeroTailBytes += parsed[k]!.zeroTailBytes;
      return {
        frames,
        goodBytes,
        tornTailBytes: total - goodBytes,
        zeroTailBytes,
        damage: null,
        resumesAt: null,
        segments: segments.length,
      };
    }
    offset += segments[i]!.length;
  }
  return { frames, goodBytes: 0, tornTailBytes: 0, zeroTailBytes: 0, damage: null, resumesAt: null, segments: 0 };
}
