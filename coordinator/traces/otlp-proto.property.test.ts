// Property: the OTLP protobuf reader gives back exactly the spans of any valid export request
// (encoded here by a wire writer of the opentelemetry-proto messages, with the fields and value
// kinds the reader skips); any truncation gives either a decode error or a prefix of those spans;
// any corruption gives a decode error or well-formed spans, never another exception. The JSON
// reader the same for its text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeTraceRequest } from './otlp-proto.js';
import { decodeTraceRequestJson, type OtlpAttributes, OtlpDecodeError, type OtlpSpan } from './span.js';

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;
/** The soak round's runs take ten times as long. */
const TIMEOUT_MS = SOAK > 1 ? 600_000 : undefined;

// --- a protobuf wire writer -------------------------------------------------------------------

type Bytes = number[];

function varint(v: bigint): Bytes {
  const out: Bytes = [];
  let x = BigInt.asUintN(64, v);
  do {
    const b = Number(x & 0x7fn);
    x >>= 7n;
    out.push(x > 0n ? b | 0x80 : b);
  } while (x > 0n);
  return out;
}
const tag = (field: number, wireType: number): Bytes => varint(BigInt((field << 3) | wireType));
const len = (field: number, body: Bytes): Bytes => [...tag(field, 2), ...varint(BigInt(body.length)), ...body];
const str = (field: number, s: string): Bytes => len(field, [...Buffer.from(s, 'utf8')]);
const uint = (field: number, v: number | bigint): Bytes => [...tag(field, 0), ...varint(BigInt(v))];
function fixed64(field: number, v: bigint): Bytes {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return [...tag(field, 1), ...b];
}
function double(field: number, v: number): Bytes {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v);
  return [...tag(field, 1), ...b];
}
function fixed32(field: number, v: number): Bytes {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return [...tag(field, 5), ...b];
}

// --- generated messages, each with what the reader must make of it ----------------------------

type Value =
  | { kind: 'string'; v: string }
  | { kind: 'bool'; v: boolean }
  | { kind: 'int'; v: bigint }
  | { kind: 'double'; v: number }
  | { kind: 'array' | 'kvlist' | 'bytes' | 'empty' };

function encodeValue(v: Value): Bytes {
  switch (v.kind) {
    case 'string':
      return str(1, v.v);
    case 'bool':
      return uint(2, v.v ? 1 : 0);
    case 'int':
      return uint(3, v.v);
    case 'double':
      return double(4, v.v);
    case 'array':
      return len(5, len(1, str(1, 'x')));
    case 'kvlist':
      return len(6, len(1, [...str(1, 'k'), ...len(2, str(1, 'v'))]));
    case 'bytes':
      return len(7, [1, 2, 3]);
    case 'empty':
      return [];
  }
}
function decodedValue(v: Value): string | number | boolean | null {
  if (v.kind === 'string' || v.kind === 'bool' || v.kind === 'double') return v.v;
  if (v.kind === 'int') return Number(v.v);
  return null;
}

const value: fc.Arbitrary<Value> = fc.oneof(
  fc.record({ kind: fc.constant('string' as const), v: fc.string({ unit: 'grapheme', maxLength: 8 }) }),
  fc.record({ kind: fc.constant('bool' as const), v: fc.boolean() }),
  fc.record({ kind: fc.constant('int' as const), v: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }) }),
  fc.record({ kind: fc.constant('double' as const), v: fc.double({ noNaN: true }) }),
  fc.record({ kind: fc.constantFrom('array' as const, 'kvlist' as const, 'bytes' as const, 'empty' as const) }),
);
const key = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('gen_ai.request.id', 'gen_ai.latency.e2e', 'service.name', 'a', '') },
  fc.string({ maxLength: 6 }),
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty'),
);
const attributes = fc.array(fc.tuple(key, value), { maxLength: 4 });

function encodeAttributes(field: number, kvs: readonly [string, Value][]): Bytes {
  return kvs.flatMap(([k, v]) => len(field, [...str(1, k), ...len(2, encodeValue(v))]));
}
function decodedAttributes(kvs: readonly [string, Value][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of kvs)
    if (k) Object.defineProperty(out, k, { value: decodedValue(v), enumerable: true, writable: true, configurable: true });
  return out;
}

const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const spanArb = fc.record({
  traceId: fc.uint8Array({ minLength: 16, maxLength: 16 }),
  spanId: fc.uint8Array({ minLength: 8, maxLength: 8 }),
  parent: fc.option(fc.uint8Array({ minLength: 8, maxLength: 8 }), { nil: undefined }),
  name: fc.string({ unit: 'grapheme', maxLength: 12 }),
  start: u64,
  end: u64,
  attributes,
  events: fc.array(fc.record({ time: u64, name: fc.string({ maxLength: 8 }), attributes }), { maxLength: 2 }),
  // Fields the reader skips: trace_state 3, kind 6, dropped counts 10/12/14, links 13, status 15, flags 16.
  extras: fc.boolean(),
});
type SpanIn = typeof spanArb extends fc.Arbitrary<infer T> ? T : never;

function encodeSpan(s: SpanIn): Bytes {
  return [
    ...len(1, [...s.traceId]),
    ...len(2, [...s.spanId]),
    ...(s.extras ? str(3, 'vendor=1') : []),
    ...(s.parent ? len(4, [...s.parent]) : []),
    ...str(5, s.name),
    ...(s.extras ? uint(6, 2) : []),
    ...fixed64(7, s.start),
    ...fixed64(8, s.end),
    ...encodeAttributes(9, s.attributes),
    ...(s.extras ? uint(10, 3) : []),
    ...s.events.flatMap((e) => len(11, [...fixed64(1, e.time), ...str(2, e.name), ...encodeAttributes(3, e.attributes), ...uint(4, 0)])),
    ...(s.extras ? [...uint(12, 1), ...len(13, [...len(1, [...s.traceId]), ...len(2, [...s.spanId])]), ...uint(14, 0)] : []),
    ...(s.extras ? [...len(15, [...str(2, 'ok'), ...uint(3, 1)]), ...fixed32(16, 0x301)] : []),
  ];
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

const request = fc.array(
  fc.record({
    resource: fc.option(attributes, { nil: undefined }),
    scopes: fc.array(fc.record({ name: fc.string({ maxLength: 6 }), spans: fc.array(spanArb, { maxLength: 3 }) }), { maxLength: 2 }),
  }),
  { maxLength: 3 },
);
type RequestIn = typeof request extends fc.Arbitrary<infer T> ? T : never;

function encodeRequest(req: RequestIn): Uint8Array {
  const bytes = req.flatMap((rs) =>
    len(1, [
      ...(rs.resource ? len(1, [...encodeAttributes(1, rs.resource), ...uint(2, 0)]) : []),
      ...rs.scopes.flatMap((sc) =>
        len(2, [...len(1, [...str(1, sc.name), ...str(2, '1.0')]), ...sc.spans.flatMap((s) => len(2, encodeSpan(s)))]),
      ),
      ...str(3, 'https://opentelemetry.io/schemas/1.24.0'),
    ]),
  );
  return Uint8Array.from(bytes);
}

/** The spans the reader must give: resource by resource, scope by scope, in order. */
function expected(req: RequestIn): Record<string, unknown>[] {
  return req.flatMap((rs) => {
    const resource = decodedAttributes(rs.resource ?? []);
    return rs.scopes.flatMap((sc) =>
      sc.spans.map((s) => ({
        traceId: hex(s.traceId),
        spanId: hex(s.spanId),
        parentSpanId: s.parent ? hex(s.parent) : '',
        name: s.name,
        startUnixNs: s.start,
        endUnixNs: s.end,
        attributes: decodedAttributes(s.attributes),
        events: s.events.map((e) => ({ name: e.name, timeUnixNs: e.time, attributes: decodedAttributes(e.attributes) })),
        resource,
      })),
    );
  });
}

/** Own keys and values only, so a key like `__proto__` is compared as the attribute it is. */
function plain(spans: readonly OtlpSpan[] | readonly Record<string, unknown>[]): unknown {
  const attrs = (a: unknown): [string, unknown][] => Object.entries(Object.getOwnPropertyDescriptors(a)).map(([k, d]) => [k, d.value]);
  return (spans as Record<string, unknown>[]).map((s) => ({
    ...s,
    attributes: attrs(s.attributes),
    resource: attrs(s.resource),
    events: (s.events as { attributes: OtlpAttributes }[]).map((e) => ({ ...e, attributes: attrs(e.attributes) })),
  }));
}

function decodeOrRefuse(bytes: Uint8Array): OtlpSpan[] | 'refused' {
  try {
    return decodeTraceRequest(bytes);
  } catch (err) {
    if (!(err instanceof OtlpDecodeError)) throw err;
    return 'refused';
  }
}

function wellFormed(s: OtlpSpan): void {
  expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
  expect(typeof s.startUnixNs).toBe('bigint');
  expect(typeof s.endUnixNs).toBe('bigint');
  expect(Array.isArray(s.events)).toBe(true);
}

/** One corruption of an encoded message: a byte changed, bytes inserted, or a run deleted. */
const corruption = fc.oneof(
  fc.record({ op: fc.constant('set' as const), at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), byte: fc.nat(255) }),
  fc.record({ op: fc.constant('flip' as const), at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), bit: fc.nat(7) }),
  fc.record({
    op: fc.constant('insert' as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 11 }),
  }),
  fc.record({
    op: fc.constant('delete' as const),
    at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
    n: fc.integer({ min: 1, max: 9 }),
  }),
);
type Corruption = typeof corruption extends fc.Arbitrary<infer T> ? T : never;

function corrupt(bytes: Uint8Array, c: Corruption): Uint8Array {
  const b = [...bytes];
  const at = Math.floor(c.at * b.length);
  if (c.op === 'set' && b.length > 0) b[at] = c.byte;
  if (c.op === 'flip' && b.length > 0) b[at]! ^= 1 << c.bit;
  if (c.op === 'insert') b.splice(at, 0, ...c.bytes);
  if (c.op === 'delete') b.splice(at, c.n);
  return Uint8Array.from(b);
}

describe('OTLP protobuf reader (property)', () => {
  it(
    'reads back exactly the spans of any valid export request',
    () => {
      fc.assert(
        fc.property(request, (req) => {
          expect(plain(decodeTraceRequest(encodeRequest(req)))).toEqual(plain(expected(req)));
        }),
        { numRuns: 300 * SOAK },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'refuses a truncated request or gives a prefix of its spans, never a wrong one',
    () => {
      fc.assert(
        fc.property(request, fc.double({ min: 0, max: 1, noNaN: true }), (req, cutAt) => {
          const bytes = encodeRequest(req);
          const got = decodeOrRefuse(bytes.subarray(0, Math.floor(cutAt * bytes.length)));
          if (got === 'refused') return;
          const want = plain(expected(req)) as unknown[];
          expect(plain(got)).toEqual(want.slice(0, got.length));
        }),
        { numRuns: 300 * SOAK },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'refuses a corrupted request with a decode error or reads well-formed spans, never throws anything else',
    () => {
      fc.assert(
        fc.property(request, fc.array(corruption, { minLength: 1, maxLength: 3 }), (req, cs) => {
          const bytes = cs.reduce(corrupt, encodeRequest(req));
          const got = decodeOrRefuse(bytes);
          if (got !== 'refused') for (const s of got) wellFormed(s);
        }),
        { numRuns: 600 * SOAK },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'refuses a field tag past 32 bits (no field number wraps around into a real one)',
    () => {
      fc.assert(
        fc.property(request, fc.integer({ min: 1, max: 2 ** 20 }), (req, high) => {
          const bytes = encodeRequest(req);
          fc.pre(bytes.length > 0);
          const wide = Uint8Array.from([...varint(BigInt(bytes[0]!) + BigInt(high) * 2n ** 32n), ...bytes.subarray(1)]);
          expect(decodeOrRefuse(wide)).toBe('refused');
        }),
        { numRuns: 100 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});

describe('OTLP/JSON reader (property)', () => {
  it(
    'refuses any cut or any JSON value in place of a part of a request with a decode error, never anything else',
    () => {
      const sample = JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'vllm' } }] },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: '6c6f616466666c656574000100000000',
                    spanId: '0001000000000001',
                    name: 'llm_request',
                    startTimeUnixNano: '1796415448030000000',
                    endTimeUnixNano: 1796415448,
                    attributes: [{ key: 'gen_ai.usage.prompt_tokens', value: { intValue: '2048' } }],
                    events: [{ name: 'first_token', timeUnixNano: '1796415448073500000' }],
                  },
                ],
              },
            ],
          },
        ],
      });
      const paths = [
        ['resourceSpans'],
        ['resourceSpans', 0],
        ['resourceSpans', 0, 'resource'],
        ['resourceSpans', 0, 'resource', 'attributes'],
        ['resourceSpans', 0, 'resource', 'attributes', 0, 'value'],
        ['resourceSpans', 0, 'scopeSpans'],
        ['resourceSpans', 0, 'scopeSpans', 0, 'spans'],
        ['resourceSpans', 0, 'scopeSpans', 0, 'spans', 0],
        ...['traceId', 'spanId', 'name', 'startTimeUnixNano', 'endTimeUnixNano', 'attributes', 'events'].map((k) => [
          'resourceSpans',
          0,
          'scopeSpans',
          0,
          'spans',
          0,
          k,
        ]),
        ['resourceSpans', 0, 'scopeSpans', 0, 'spans', 0, 'attributes', 0, 'value', 'intValue'],
        ['resourceSpans', 0, 'scopeSpans', 0, 'spans', 0, 'events', 0],
        ['resourceSpans', 0, 'scopeSpans', 0, 'spans', 0, 'events', 0, 'timeUnixNano'],
      ];
      fc.assert(
        fc.property(
          fc.constantFrom(...paths),
          fc.jsonValue({ maxDepth: 2 }),
          fc.double({ min: 0, max: 1, noNaN: true }),
          (path, v, cutAt) => {
            const doc = JSON.parse(sample);
            let node = doc;
            for (const k of path.slice(0, -1)) node = node[k];
            node[path.at(-1)!] = v;
            for (const text of [JSON.stringify(doc), sample.slice(0, Math.floor(cutAt * sample.length))]) {
              try {
                for (const s of decodeTraceRequestJson(text)) {
                  wellFormed(s);
                  // JSON has no NaN or infinity: a number read from it is one it holds.
                  for (const v of [s.attributes, s.resource, ...s.events.map((e) => e.attributes)].flatMap((a) => Object.values(a)))
                    if (typeof v === 'number') expect(Number.isFinite(v), `attribute value ${v}`).toBe(true);
                }
              } catch (err) {
                if (!(err instanceof OtlpDecodeError)) throw err;
              }
            }
          },
        ),
        { numRuns: 600 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});
