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
  /** Bytes of whole, checked frames. */
  goodBytes: number;
  /** A last frame cut short (the process died while writing it; never acknowledged), in bytes. */
  tornTailBytes: number;
  /** Set when a whole frame failed its checksum or did not decode, with its offset: damage, not a torn tail. */
  damage: string | null;
}

/** Parses a journal's bytes. A torn tail is dropped and counted; damage stops the read and is named. */
export function parseJournal(buf: Uint8Array): ParsedJournal {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const frames: JournalFrame[] = [];
  let at = 0;
  while (at < b.length) {
    if (b.length - at < FRAME_HEAD) return { frames, goodBytes: at, tornTailBytes: b.length - at, damage: null };
    const len = b.readUInt32LE(at);
    if (len === 0 || len > MAX_PAYLOAD)
      return { frames, goodBytes: at, tornTailBytes: 0, damage: `a frame of length ${len} at byte ${at}` };
    if (b.length - at - FRAME_HEAD < len) return { frames, goodBytes: at, tornTailBytes: b.length - at, damage: null };
    const payload = b.subarray(at + FRAME_HEAD, at + FRAME_HEAD + len);
    // A torn write can leave the file's length ahead of its data (zeros): the checksum tells.
    if (crc32(payload) !== b.readUInt32LE(at + 4)) {
      const last = at + FRAME_HEAD + len === b.length;
      return last
        ? { frames, goodBytes: at, tornTailBytes: b.length - at, damage: null }
        : { frames, goodBytes: at, tornTailBytes: 0, damage: `a frame failing its checksum at byte ${at}` };
    }
    try {
      frames.push(decodePayload(payload));
    } catch (err) {
      return { frames, goodBytes: at, tornTailBytes: 0, damage: `an undecodable frame at byte ${at}: ${(err as Error).message}` };
    }
    at += FRAME_HEAD + len;
  }
  return { frames, goodBytes: at, tornTailBytes: 0, damage: null };
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
