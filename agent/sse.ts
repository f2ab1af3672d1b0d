// A pure server-sent-events parser: bytes in, `data` payloads out. It is fed raw chunks as they
// arrive (timestamps are taken by the caller before it runs) and never parses JSON. It scans the
// bytes for line ends and builds one string per data line, nothing else: no decoded copy of the
// chunk, no per-event slices or line arrays (at tens of thousands of chunks a second, those were
// most of the parser's cost and garbage).

import type { DeltaPatterns } from '../shared/apis/contract.js';

export type { DeltaPatterns } from '../shared/apis/contract.js';

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const EMPTY = Buffer.alloc(0);

/** Where a parser's events go: a method, so a request's handler can be its own sink (no closure per stream). */
export interface SseSink {
  onEvent(data: string): void;
}

/**
 * Splits a byte stream into SSE events and hands each event's data (lines joined by \n) to its
 * sink. Lines end in LF, CRLF or a lone CR, and a leading byte-order mark is ignored, as the SSE
 * specification (WHATWG HTML §9.2.6) says.
 */
export class SseParser {
  /** The bytes of an unfinished line (only they are copied, so a split line is whole when decoded). */
  private partialLine: Buffer = EMPTY;
  /** The data lines of the event being read, joined; undefined before its first one. */
  private data: string | undefined;
  /** Whether the event being read has any line yet (a stream cut there was cut mid-event). */
  private inEvent = false;
  /** The last chunk ended in a CR: an LF starting the next one is the rest of that CRLF. */
  private skipLf = false;
  /** No line has been read yet (only the first may start with a byte-order mark). */
  private firstLine = true;

  private readonly sink: SseSink;

  constructor(sink: SseSink | ((data: string) => void)) {
    this.sink = typeof sink === 'function' ? { onEvent: sink } : sink;
  }

  /** Feeds one chunk; complete events are delivered synchronously, a partial one is kept. */
  push(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    let buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.partialLine.length > 0) {
      buf = Buffer.concat([this.partialLine, buf]);
      this.partialLine = EMPTY;
    }
    let pos = 0;
    if (this.skipLf) {
      this.skipLf = false;
      if (buf[0] === LF) pos = 1;
    }
    // The next LF and the next CR, each searched again only once passed (a stream without CRs
    // costs one scan of the chunk for them, not one per line).
    let lf = buf.indexOf(LF, pos);
    let cr = buf.indexOf(CR, pos);
    while (pos < buf.length) {
      if (lf !== -1 && lf < pos) lf = buf.indexOf(LF, pos);
      if (cr !== -1 && cr < pos) cr = buf.indexOf(CR, pos);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) break;
      this.line(buf, pos, end);
      pos = end + 1;
      if (buf[end] === CR) {
        // A CR at the chunk's end has ended its line; an LF opening the next chunk belongs to it.
        if (pos === buf.length) this.skipLf = true;
        else if (buf[pos] === LF) pos++;
      }
    }
    if (pos < buf.length) this.partialLine = Buffer.from(buf.subarray(pos));
  }

  /** Whether bytes of an unfinished event are buffered (a stream ending here was cut mid-event). */
  hasPartial(): boolean {
    if (this.inEvent) return true;
    const rest = this.partialLine.toString('latin1');
    return (this.firstLine ? rest.replace(/^\xef\xbb\xbf/, '') : rest).trim().length > 0; // a lone byte-order mark is no event
  }

  // One line [start, end): a blank line ends the event; `data:` lines carry it (a bare `data`
  // line carries an empty one); comments, event:, id: and retry: carry no tokens.
  private line(buf: Buffer, start: number, end: number): void {
    if (this.firstLine) {
      this.firstLine = false;
      if (end - start >= 3 && buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf) start += 3;
    }
    if (start === end) {
      const data = this.data;
      this.data = undefined;
      this.inEvent = false;
      if (data !== undefined) this.sink.onEvent(data);
      return;
    }
    this.inEvent = true;
    if (end - start < 4 || buf[start] !== 0x64 || buf[start + 1] !== 0x61 || buf[start + 2] !== 0x74 || buf[start + 3] !== 0x61) return;
    let value = '';
    if (end - start > 4) {
      if (buf[start + 4] !== 0x3a) return; // "data:"
      const from = buf[start + 5] === SPACE && start + 5 < end ? start + 6 : start + 5;
      value = buf.toString('utf8', from, end);
    }
    this.data = this.data === undefined ? value : `${this.data}\n${value}`;
  }
}

/** Bit flags describing what one data payload carried. */
export const EventFlag = {
  CONTENT: 1,
  REASONING: 2,
  USAGE: 4,
  DONE: 8,
  ERROR: 16,
  MALFORMED: 32,
  TOOL_CALL: 64,
  /** Opens a tool call (its id and name) without any of its tokens: kept for the call's head, not counted. */
  TOOL_HEAD: 128,
} as const;

const ERROR_EVENT = /^\{\s*"error"\s*:/;

/**
 * Classifies a payload by scanning, not parsing, with its API's patterns: the end of the stream
 * (its terminator payload, or its end event), non-empty content/reasoning deltas, a usage object,
 * an error object. A payload that is not a braced object (nor the terminator) is MALFORMED (a
 * cheap structural check; the few usage events per request are fully parsed by the caller).
 */
export function classifyEvent(data: string, patterns: DeltaPatterns): number {
  if (data === patterns.terminator) return EventFlag.DONE;
  const trimmed = data.trim();
  if (trimmed.charCodeAt(0) !== 0x7b || trimmed.charCodeAt(trimmed.length - 1) !== 0x7d) return EventFlag.MALFORMED; // { … }
  if (ERROR_EVENT.test(trimmed) || patterns.error?.test(trimmed)) return EventFlag.ERROR;
  let flags = 0;
  if (patterns.content.test(trimmed)) flags |= EventFlag.CONTENT;
  if (patterns.reasoning?.test(trimmed)) flags |= EventFlag.REASONING;
  if (patterns.usage.test(trimmed)) flags |= EventFlag.USAGE;
  if (patterns.toolCall?.test(trimmed)) flags |= EventFlag.TOOL_CALL;
  if (patterns.toolHead?.test(trimmed)) flags |= EventFlag.TOOL_HEAD;
  if (patterns.doneEvent?.test(trimmed)) flags |= EventFlag.DONE;
  return flags;
}
