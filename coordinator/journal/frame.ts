// The run journal's frames (pure: no I/O). The journal is a write-ahead log of what the run took
// from its agents: one header (what a recovery needs to rebuild the run), then every sequenced
// message each agent sent, as the very bytes that arrived, and the run's own events (an agent lost,
// the run stopped or closing). Each frame is length-prefixed and checksummed, so a reader can tell
// a torn tail (the process died mid-write: dropped, it was never acknowledged) from damage in
// the middle (reported, never silently skipped).
import { crc32 } from 'node:zlib';
import { Packr } from 'msgpackr';

/** Bytes before a frame's payload: its length (u32 LE) and the CRC-32 of the payload (u32 LE). */
export const FRAME_HEAD = 8;
/** The largest payload a frame may carry (a length beyond it is damage, not a frame). */
export const MAX_PAYLOAD = 256 * 1024 * 1024;

/** What a frame holds (its payload's first byte). */
export const FrameKind = { HEADER: 1, MESSAGE: 2, EVENT: 3 } as const;

// Plain maps, bigints kept (the header holds nanosecond instants).
const packr = new Packr({ useRecords: false, moreTypes: true });

/** An agent message as it arrived: the agent's position in the run, its process epoch, the frame. */
export interface JournalMessage {
  agent: number;
  epoch: string;
  raw: Uint8Array;
}

/** A run event the recovery must know (the messages alone do not tell it). */
export type JournalEvent =
  /** The agent is gone for the run (its grace ran out, or its process restarted). */
  | { type: 'lost'; agent: number; why: string; at_s: number }
  /** The run told its agents to stop (the first reason is the run's). */
  | { type: 'stop'; reason: string }
  /** The run stopped taking messages and began writing its directory. */
  | { type: 'closing'; at_s: number };

/** One decoded frame. */
export type JournalFrame =
  | { kind: 'header'; header: unknown }
  | { kind: 'message'; message: JournalMessage }
  | { kind: 'event'; event: JournalEvent };

function framed(kind: number, body: Uint8Array, prefix?: Uint8Array): Buffer {
  const payloadLen = 1 + (prefix?.length ?? 0) + body.length;
  const out = Buffer.allocUnsafe(FRAME_HEAD + payloadLen);
  out[FRAME_HEAD] = kind;
  let at = FRAME_HEAD + 1;
  if (prefix) {
    out.set(prefix, at);
    at += prefix.length;
  }
  out.set(body, at);
  out.writeUInt32LE(payloadLen, 0);
  out.writeUInt32LE(crc32(out.subarray(FRAME_HEAD)), 4);
  return out;
}

/** The header frame (any plain data with bigints). */
export function headerFrame(header: unknown): Buffer {
  return framed(FrameKind.HEADER, packr.pack(header));
}

/** A message frame: agent index (u32 LE), epoch length (u8), epoch, then the message's bytes. */
export function messageFrame(agent: number, epoch: string, raw: Uint8Array): Buffer {
  const e = Buffer.from(epoch, 'utf8');
  const prefix = Buffer.allocUnsafe(5 + e.length);
  prefix.writeUInt32LE(agent, 0);
  prefix[4] = e.length;
  prefix.set(e, 5);
  return framed(FrameKind.MESSAGE, raw, prefix);
}

/** An event frame. */
export function eventFrame(event: JournalEvent): Buffer {
  return framed(FrameKind.EVENT, packr.pack(event));
}

/** What a journal's bytes held: its frames, and where and why reading stopped early. */
export interface ParsedJournal {
  frames: JournalFrame[];
  /** Bytes of whole, checked frames: the end of the last valid frame. */
  goodBytes: number;
  /**
   * Bytes after the last valid frame when no valid frame follows them: the log's end (a frame cut
   * short, or zeros where a write had not reached the disk). Never acknowledged: cut off on reopen.
   */
  tornTailBytes: number;
  /** Of the tail, how many bytes are zeros (a file grown before its data blocks were written, or preallocated). */
  zeroTailBytes: number;
  /**
   * Set when an unreadable frame is followed by a valid one: damage before the log's end, not a
   * tail, with its offset. Nothing past it is read.
   */
  damage: string | null;
  /** Where the valid frame after the damage begins (null without damage). */
  resumesAt: number | null;
}

type FrameAt = { frame: JournalFrame; end: number } | { why: string; checked: boolean };

// The frame starting at `at`, or why there is none. `checked`: its checksum held (so it was written
// whole) but it did not decode.
function frameAt(b: Buffer, at: number): FrameAt {
  if (b.length - at < FRAME_HEAD) return { why: `${b.length - at} bytes, less than a frame's head`, checked: false };
  const len = b.readUInt32LE(at);
  if (len === 0 || len > MAX_PAYLOAD) return { why: `a frame of length ${len}`, checked: false };
  if (b.length - at - FRAME_HEAD < len) return { why: `a frame of ${len} bytes cut short`, checked: false };
  const payload = b.subarray(at + FRAME_HEAD, at + FRAME_HEAD + len);
  if (crc32(payload) !== b.readUInt32LE(at + 4)) return { why: 'a frame failing its checksum', checked: false };
  try {
    return { frame: decodePayload(payload), end: at + FRAME_HEAD + len };
  } catch (err) {
    return { why: `an undecodable frame (${(err as Error).message})`, checked: true };
  }
}

// The first offset after `from` where a whole, checked frame starts, or -1. A length field is
// checked before the checksum, so zeros and random bytes are passed over cheaply.
function nextValidFrame(b: Buffer, from: number): number {
  for (let p = from; p + FRAME_HEAD < b.length; p++) {
    const len = b.readUInt32LE(p);
    if (len === 0 || len > b.length - p - FRAME_HEAD) continue;
    const kind = b[p + FRAME_HEAD]!;
    if (kind !== FrameKind.HEADER && kind !== FrameKind.MESSAGE && kind !== FrameKind.EVENT) continue;
    if (crc32(b.subarray(p + FRAME_HEAD, p + FRAME_HEAD + len)) === b.readUInt32LE(p + 4)) return p;
  }
  return -1;
}

function zerosFrom(b: Buffer, at: number): number {
  let n = 0;
  for (let i = b.length - 1; i >= at && b[i] === 0; i--) n++;
  return n;
}

/**
 * Parses a journal's bytes up to its last valid frame. What follows it, when no valid frame comes
 * after, is the log's end — a torn frame or zeros, as PostgreSQL and SQLite read a WAL's tail — and
 * is counted, not an error. An unreadable frame followed by a valid one is damage: named, with
 * the frames before it, and nothing after it is read.
 */
export function parseJournal(buf: Uint8Array): ParsedJournal {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const frames: JournalFrame[] = [];
  let at = 0;
  while (at < b.length) {
    const f = frameAt(b, at);
    if ('frame' in f) {
      frames.push(f.frame);
      at = f.end;
      continue;
    }
    const next = f.checked ? at : nextValidFrame(b, at + 1);
    if (next === -1)
      return { frames, goodBytes: at, tornTailBytes: b.length - at, zeroTailBytes: zerosFrom(b, at), damage: null, resumesAt: null };
    return { frames, goodBytes: at, tornTailBytes: 0, zeroTailBytes: 0, damage: `${f.why} at byte ${at}`, resumesAt: next };
  }
  return { frames, goodBytes: at, tornTailBytes: 0, zeroTailBytes: 0, damage: null, resumesAt: null };
}

function decodePayload(p: Buffer): JournalFrame {
  switch (p[0]) {
    case FrameKind.HEADER:
      return { kind: 'header', header: packr.unpack(p.subarray(1)) };
    case FrameKind.MESSAGE: {
      const agent = p.readUInt32LE(1);
      const el = p[5]!;
      const epoch = p.subarray(6, 6 + el).toString('utf8');
      return { kind: 'message', message: { agent, epoch, raw: p.subarray(6 + el) } };
    }
    case FrameKind.EVENT:
      return { kind: 'event', event: packr.unpack(p.subarray(1)) as JournalEvent };
    default:
      throw new Error(`unknown frame kind ${p[0]}`);
  }
}
