// Pure: an OTLP ExportTraceServiceRequest read from its protobuf bytes, only as far as a server's
// per-request spans need (opentelemetry-proto trace/v1: resource, scope, span ids, name, times,
// attributes, events). A hand-written wire reader keeps the receiver free of a protobuf runtime and
// of generated code; anything malformed throws, so the receiver can refuse it and count it.
import { type OtlpAttributes, OtlpDecodeError, type OtlpSpan, setAttribute } from './span.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Reads protobuf wire format from one buffer; every read is bounds-checked. */
class Wire {
  pos = 0;
  constructor(
    readonly buf: Uint8Array,
    readonly end: number = buf.length,
  ) {}

  get done(): boolean {
    return this.pos >= this.end;
  }

  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw new OtlpDecodeError('truncated varint');
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
    throw new OtlpDecodeError('varint longer than 10 bytes');
  }

  small(): number {
    const v = this.varint();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new OtlpDecodeError('length or tag out of range');
    return Number(v);
  }

  fixed64(): bigint {
    if (this.pos + 8 > this.end) throw new OtlpDecodeError('truncated fixed64');
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getBigUint64(0, true);
    this.pos += 8;
    return v;
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new OtlpDecodeError('truncated double');
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
    this.pos += 8;
    return v;
  }

  /** The bytes of a length-delimited field, as a sub-reader over the same buffer. */
  sub(): Wire {
    const len = this.small();
    if (this.pos + len > this.end) throw new OtlpDecodeError('length-delimited field runs past its message');
    const w = new Wire(this.buf, this.pos + len);
    w.pos = this.pos;
    this.pos += len;
    return w;
  }

  bytes(): Uint8Array {
    const w = this.sub();
    return this.buf.subarray(w.pos, w.end);
  }

  string(): string {
    try {
      return UTF8.decode(this.bytes());
    } catch {
      throw new OtlpDecodeError('a string field that is not UTF-8');
    }
  }

  /** Skips a field of the given wire type (fields this reader does not need). */
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.advance(8);
    else if (wireType === 2) this.sub();
    else if (wireType === 5) this.advance(4);
    else throw new OtlpDecodeError(`unsupported wire type ${wireType}`);
  }

  private advance(n: number): void {
    if (this.pos + n > this.end) throw new OtlpDecodeError('truncated field');
    this.pos += n;
  }

  /** Each field of this message: calls `on(field, wireType)`, which must consume it or return false to skip it. */
  fields(on: (field: number, wireType: number) => boolean): void {
    while (!this.done) {
      const tag = this.small();
      // A tag is a uint32 (field numbers end at 2^29 − 1): a longer one would wrap into another field.
      if (tag > 0xffff_ffff) throw new OtlpDecodeError('field tag past 32 bits');
      const field = tag >>> 3;
      const wireType = tag & 7;
      if (field === 0) throw new OtlpDecodeError('field number 0');
      if (!on(field, wireType)) this.skip(wireType);
    }
  }
}

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** AnyValue: string 1, bool 2, int 3, double 4 (arrays, lists and bytes are kept as null). */
function anyValue(w: Wire): string | number | boolean | null {
  let v: string | number | boolean | null = null;
  w.fields((f, t) => {
    if (f === 1 && t === 2) v = w.string();
    else if (f === 2 && t === 0) v = w.varint() !== 0n;
    else if (f === 3 && t === 0) v = Number(BigInt.asIntN(64, w.varint()));
    else if (f === 4 && t === 1) v = w.double();
    else return false;
    return true;
  });
  return v;
}

/** KeyValue: key 1, value 2, added to `into`. */
function keyValue(w: Wire, into: OtlpAttributes): void {
  let key = '';
  let value: string | number | boolean | null = null;
  w.fields((f, t) => {
    if (f === 1 && t === 2) key = w.string();
    else if (f === 2 && t === 2) value = anyValue(w.sub());
    else return false;
    return true;
  });
  if (key) setAttribute(into, key, value);
}

/** Attributes-only messages (Resource 1, InstrumentationScope 3). */
function attributesOf(w: Wire, field: number): OtlpAttributes {
  const out: OtlpAttributes = {};
  w.fields((f, t) => {
    if (f === field && t === 2) keyValue(w.sub(), out);
    else return false;
    return true;
  });
  return out;
}

/** Span.Event: time 1 (fixed64), name 2, attributes 3. */
function event(w: Wire): { name: string; timeUnixNs: bigint; attributes: OtlpAttributes } {
  const e = { name: '', timeUnixNs: 0n, attributes: {} as OtlpAttributes };
  w.fields((f, t) => {
    if (f === 1 && t === 1) e.timeUnixNs = w.fixed64();
    else if (f === 2 && t === 2) e.name = w.string();
    else if (f === 3 && t === 2) keyValue(w.sub(), e.attributes);
    else return false;
    return true;
  });
  return e;
}

/** Span: trace_id 1, span_id 2, parent_span_id 4, name 5, start 7, end 8, attributes 9, events 11. */
function span(w: Wire, resource: OtlpAttributes): OtlpSpan {
  const s: OtlpSpan = {
    traceId: '',
    spanId: '',
    parentSpanId: '',
    name: '',
    startUnixNs: 0n,
    endUnixNs: 0n,
    attributes: {},
    events: [],
    resource,
  };
  w.fields((f, t) => {
    if (f === 1 && t === 2) s.traceId = hex(w.bytes());
    else if (f === 2 && t === 2) s.spanId = hex(w.bytes());
    else if (f === 4 && t === 2) s.parentSpanId = hex(w.bytes());
    else if (f === 5 && t === 2) s.name = w.string();
    else if (f === 7 && t === 1) s.startUnixNs = w.fixed64();
    else if (f === 8 && t === 1) s.endUnixNs = w.fixed64();
    else if (f === 9 && t === 2) keyValue(w.sub(), s.attributes);
    else if (f === 11 && t === 2) s.events.push(event(w.sub()));
    else return false;
    return true;
  });
  if (s.traceId.length !== 32 || s.spanId.length !== 16)
    throw new OtlpDecodeError(`span ${s.name || '(unnamed)'} without a 16-byte trace id and an 8-byte span id`);
  return s;
}

/**
 * Every span of an ExportTraceServiceRequest (resource_spans 1 → ResourceSpans{resource 1,
 * scope_spans 2 → ScopeSpans{spans 2}}), each with its resource's attributes.
 */
export function decodeTraceRequest(bytes: Uint8Array): OtlpSpan[] {
  const spans: OtlpSpan[] = [];
  const top = new Wire(bytes);
  top.fields((f, t) => {
    if (f !== 1 || t !== 2) return false;
    const rs = top.sub();
    let resource: OtlpAttributes = {};
    const scopes: Wire[] = [];
    rs.fields((rf, rt) => {
      if (rf === 1 && rt === 2) resource = attributesOf(rs.sub(), 1);
      else if (rf === 2 && rt === 2) scopes.push(rs.sub());
      else return false;
      return true;
    });
    for (const ss of scopes)
      ss.fields((sf, st) => {
        if (sf === 2 && st === 2) spans.push(span(ss.sub(), resource));
        else return false;
        return true;
      });
    return true;
  });
  return spans;
}
