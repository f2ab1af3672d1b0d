// A server span as the receiver keeps it, and the OTLP/JSON encoding of an export request read into
// it (the JSON mapping of the same protobuf messages: lowerCamelCase names, trace and span ids as
// hex, 64-bit integers as decimal strings or numbers).

/** An OTLP payload (protobuf or JSON) that does not decode: the receiver refuses it and counts it. */
export class OtlpDecodeError extends Error {}

/** A span's (or resource's) attributes: scalar values only; arrays and maps are kept as null. */
export type OtlpAttributes = Record<string, string | number | boolean | null>;

/**
 * Sets one attribute as an own property: a plain assignment of the key `__proto__` would set the
 * object's prototype instead (and drop the attribute), whatever key a server sends.
 */
export function setAttribute(into: OtlpAttributes, key: string, value: OtlpAttributes[string]): void {
  Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
}

/** One span: ids as lowercase hex, times in the server's own clock (Unix ns). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  startUnixNs: bigint;
  endUnixNs: bigint;
  attributes: OtlpAttributes;
  events: { name: string; timeUnixNs: bigint; attributes: OtlpAttributes }[];
  /** The attributes of the resource that emitted it (service.name, host…). */
  resource: OtlpAttributes;
}

type Json = Record<string, unknown>;

const obj = (v: unknown, what: string): Json => {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new OtlpDecodeError(`${what} is not an object`);
  return v as Json;
};
const list = (v: unknown, what: string): unknown[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpDecodeError(`${what} is not an array`);
  return v;
};
const u64 = (v: unknown, what: string): bigint => {
  if (v === undefined || v === null) return 0n;
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  throw new OtlpDecodeError(`${what} is not an unsigned 64-bit integer`);
};
// An int64 is a decimal string in OTLP/JSON (a number from some writers); anything else would read as NaN.
const i64 = (v: unknown, what: string): number => {
  if (typeof v === 'string' && /^-?\d{1,19}$/.test(v)) return Number(v);
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  throw new OtlpDecodeError(`${what} is not a 64-bit integer`);
};
const hexId = (v: unknown, bytes: number, what: string): string => {
  if (v === undefined || v === null || v === '') return '';
  if (typeof v !== 'string' || !new RegExp(`^[0-9a-fA-F]{${2 * bytes}}$`).test(v))
    throw new OtlpDecodeError(`${what} is not ${bytes} bytes of hex`);
  return v.toLowerCase();
};

function anyValue(v: unknown): string | number | boolean | null {
  const a = obj(v, 'value');
  if (typeof a.stringValue === 'string') return a.stringValue;
  if (typeof a.boolValue === 'boolean') return a.boolValue;
  if (a.intValue !== undefined) return i64(a.intValue, 'intValue');
  if (typeof a.doubleValue === 'number') return a.doubleValue;
  return null;
}

function attributes(v: unknown, what: string): OtlpAttributes {
  const out: OtlpAttributes = {};
  for (const kv of list(v, what)) {
    const o = obj(kv, `${what}[]`);
    if (typeof o.key === 'string' && o.key) setAttribute(out, o.key, o.value === undefined ? null : anyValue(o.value));
  }
  return out;
}

function span(v: unknown, resource: OtlpAttributes): OtlpSpan {
  const s = obj(v, 'span');
  const out: OtlpSpan = {
    traceId: hexId(s.traceId, 16, 'traceId'),
    spanId: hexId(s.spanId, 8, 'spanId'),
    parentSpanId: hexId(s.parentSpanId, 8, 'parentSpanId'),
    name: typeof s.name === 'string' ? s.name : '',
    startUnixNs: u64(s.startTimeUnixNano, 'startTimeUnixNano'),
    endUnixNs: u64(s.endTimeUnixNano, 'endTimeUnixNano'),
    attributes: attributes(s.attributes, 'attributes'),
    events: list(s.events, 'events').map((e) => {
      const o = obj(e, 'event');
      return {
        name: typeof o.name === 'string' ? o.name : '',
        timeUnixNs: u64(o.timeUnixNano, 'timeUnixNano'),
        attributes: attributes(o.attributes, 'event attributes'),
      };
    }),
    resource,
  };
  if (!out.traceId || !out.spanId) throw new OtlpDecodeError(`span ${out.name || '(unnamed)'} without a trace id and a span id`);
  return out;
}

/** Every span of an OTLP/JSON ExportTraceServiceRequest. */
export function decodeTraceRequestJson(text: string): OtlpSpan[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new OtlpDecodeError(`not JSON: ${(err as Error).message}`);
  }
  const spans: OtlpSpan[] = [];
  for (const rs of list(obj(doc, 'request').resourceSpans, 'resourceSpans')) {
    const r = obj(rs, 'resourceSpans[]');
    const resource = r.resource ? attributes(obj(r.resource, 'resource').attributes, 'resource attributes') : {};
    for (const ss of list(r.scopeSpans, 'scopeSpans'))
      for (const s of list(obj(ss, 'scopeSpans[]').spans, 'spans')) spans.push(span(s, resource));
  }
  return spans;
}
