// A pure server-sent-events parser: bytes in, `data` payloads out. It is fed raw chunks as they
// arrive (timestamps are taken by the caller before it runs) and never parses JSON.
import { StringDecoder } from 'node:string_decoder';

/** Splits a byte stream into SSE events and hands each event's data (lines joined by \n) to `onData`. */
export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(private readonly onData: (data: string) => void) {}

  /** Feeds one chunk; complete events are delivered synchronously, a partial one is kept. */
  push(chunk: Uint8Array): void {
    let text = this.pending + this.decoder.write(chunk as Buffer);
    // CRLF streams are normalised; a CR left at a chunk's end meets its LF on the next push.
    if (text.includes('\r')) text = text.replace(/\r\n/g, '\n');
    let start = 0;
    for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n', start)) {
      this.dispatch(text.slice(start, end));
      start = end + 2;
    }
    this.pending = text.slice(start);
  }

  /** Whether bytes of an unfinished event are buffered (a stream ending here was cut mid-event). */
  hasPartial(): boolean {
    return this.pending.trim().length > 0;
  }

  private dispatch(block: string): void {
    let data: string | undefined;
    for (const line of block.split('\n')) {
      if (!line.startsWith('data:')) continue; // comments, event:, id:, retry: carry no tokens
      const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      data = data === undefined ? value : `${data}\n${value}`;
    }
    if (data !== undefined) this.onData(data);
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
} as const;

/** Regexes an API adapter provides to classify its deltas without parsing JSON. */
export interface DeltaPatterns {
  /** Matches a non-empty visible-text delta. */
  content: RegExp;
  /** Matches a non-empty reasoning delta, or null for APIs without reasoning. */
  reasoning: RegExp | null;
}

const USAGE = /"usage":\s*\{/;
const ERROR_EVENT = /^\{\s*"error"\s*:/;

/**
 * Classifies a payload by scanning, not parsing: `[DONE]`, non-empty content/reasoning deltas,
 * a usage object, an error object. A payload that is not a braced object is MALFORMED (a cheap
 * structural check; the one usage event per request is fully parsed by the caller).
 */
export function classifyEvent(data: string, patterns: DeltaPatterns): number {
  if (data === '[DONE]') return EventFlag.DONE;
  const trimmed = data.trim();
  if (!trimmed.startsWith('{') || !trimmed.endsWith('}')) return EventFlag.MALFORMED;
  if (ERROR_EVENT.test(trimmed)) return EventFlag.ERROR;
  let flags = 0;
  if (patterns.content.test(trimmed)) flags |= EventFlag.CONTENT;
  if (patterns.reasoning?.test(trimmed)) flags |= EventFlag.REASONING;
  if (USAGE.test(trimmed)) flags |= EventFlag.USAGE;
  return flags;
}
