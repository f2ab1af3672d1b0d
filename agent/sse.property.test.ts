// Property: the SSE parser gives the events the SSE specification (WHATWG HTML §9.2.6) gives, for
// any stream of data, comment and other field lines with LF, CRLF or CR line ends (and a leading
// byte-order mark), however the bytes are chunked; a stream cut anywhere gives a prefix of the
// events, never a wrong one, and is reported as cut mid-event whenever a data line is pending.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.js';

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;
/** The soak round's runs take ten times as long. */
const TIMEOUT_MS = SOAK > 1 ? 600_000 : undefined;

/** The specification's parser over a whole decoded text: the data of each dispatched event. */
function reference(text: string): { events: string[]; pendingData: boolean; endsClean: boolean } {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const lines = body.split(/\r\n|\r|\n/);
  const unfinished = lines.pop()!; // the text after the last line end is no line yet
  const events: string[] = [];
  let buffer = '';
  for (const line of lines) {
    if (line === '') {
      if (buffer !== '') events.push(buffer.slice(0, -1));
      buffer = '';
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') buffer += `${value}\n`;
  }
  return {
    events,
    pendingData: buffer !== '' || unfinished.startsWith('data'),
    // Nothing after the last event's blank line: a stream ending here ended between events.
    endsClean: unfinished === '' && (lines.length === 0 || lines.at(-1) === ''),
  };
}

// Values without line ends: JSON-ish payloads, any text (multi-byte characters included), spaces, colons.
const value = fc
  .oneof(
    fc.string({ unit: 'grapheme', maxLength: 12 }),
    fc.string({ unit: fc.constantFrom('a', ' ', ':', '{', '}', '"', 'é', '日', '\u2028', '\uFEFF'), maxLength: 10 }),
    fc.json({ maxDepth: 2 }),
  )
  .map((v) => v.replace(/[\r\n]/g, ''));

const line = fc.oneof(
  { weight: 6, arbitrary: value.map((v) => `data: ${v}`) },
  { weight: 2, arbitrary: value.map((v) => `data:${v}`) },
  fc.constant('data'),
  fc.constant('data '),
  fc.constant('data:'),
  value.map((v) => `: ${v}`),
  value.map((v) => `event: ${v}`),
  fc.constantFrom('id: 7', 'retry: 1000', 'dat: x', 'Data: x', ' data: x', 'datum: x', 'data : x'),
);

const ending = fc.constantFrom('\n', '\r\n', '\r');

/** A stream: events of a few lines each, each line with its own ending, each event ended by a blank line. */
const stream = fc
  .record({
    bom: fc.boolean(),
    events: fc.array(fc.array(fc.tuple(line, ending), { maxLength: 4 }), { maxLength: 6 }),
    blanks: fc.array(ending, { minLength: 1, maxLength: 6 }),
  })
  .map(({ bom, events, blanks }) => {
    let text = bom ? '\uFEFF' : '';
    events.forEach((ev, i) => {
      for (const [l, end] of ev) text += l + end;
      text += blanks[i % blanks.length];
    });
    return Buffer.from(text, 'utf8');
  });

/** Cut points dividing `n` bytes into chunks (any, including inside UTF-8 characters and CRLFs). */
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 });

function chunked(bytes: Buffer, at: readonly number[]): Buffer[] {
  const points = [...new Set(at.map((f) => Math.floor(f * bytes.length)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  return out;
}

function parse(chunks: readonly Buffer[]): { events: string[]; partial: boolean } {
  const events: string[] = [];
  const p = new SseParser((d) => events.push(d));
  for (const c of chunks) p.push(c);
  return { events, partial: p.hasPartial() };
}

describe('SSE parser (property)', () => {
  it(
    'gives the specification’s events for any chunking',
    () => {
      fc.assert(
        fc.property(stream, cuts, (bytes, at) => {
          const want = reference(bytes.toString('utf8')).events;
          expect(parse(chunked(bytes, at)).events).toEqual(want);
          expect(parse(Array.from(bytes, (b) => Buffer.of(b))).events).toEqual(want);
        }),
        { numRuns: 1500 * SOAK },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'gives a prefix of the events for a stream cut anywhere, and says it was cut while data is pending',
    () => {
      fc.assert(
        fc.property(stream, fc.double({ min: 0, max: 1, noNaN: true }), cuts, (bytes, cutAt, at) => {
          const whole = reference(bytes.toString('utf8')).events;
          const cut = bytes.subarray(0, Math.floor(cutAt * bytes.length));
          const want = reference(cut.toString('utf8'));
          const got = parse(chunked(cut, at));
          expect(got.events).toEqual(whole.slice(0, got.events.length));
          expect(got.events).toEqual(want.events);
          if (want.pendingData) expect(got.partial).toBe(true);
          // A stream that ends right after an event's blank line was not cut.
          if (want.endsClean) expect(got.partial).toBe(false);
        }),
        { numRuns: 1500 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});
