import { readFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { GRPC_TRACE_EXPORT, startTraceReceiver, type TraceReceiver } from './receiver.js';
import type { OtlpSpan } from './span.js';

// Written by the official OpenTelemetry JS serializers (test/fixtures/otlp/README.md).
const PB = readFileSync(new URL('../../test/fixtures/otlp/spans.pb', import.meta.url));
const JSON_BODY = readFileSync(new URL('../../test/fixtures/otlp/spans.json', import.meta.url));

let receiver: TraceReceiver | undefined;
afterEach(async () => receiver?.close());

async function start(maxBodyBytes?: number): Promise<{ r: TraceReceiver; got: OtlpSpan[] }> {
  const got: OtlpSpan[] = [];
  receiver = await startTraceReceiver({
    host: '127.0.0.1',
    httpPort: 0,
    grpcPort: 0,
    onSpans: (s) => got.push(...s),
    ...(maxBodyBytes && { maxBodyBytes }),
  });
  return { r: receiver, got };
}

const post = (r: TraceReceiver, body: Buffer, headers: Record<string, string>, path = '/v1/traces') =>
  fetch(`http://127.0.0.1:${r.httpPort}${path}`, { method: 'POST', body, headers });

/** One gRPC unary call, framed by hand as the wire carries it: flag byte, 4-byte length, message. */
async function grpcExport(r: TraceReceiver, message: Buffer, opts: { gzip?: boolean; path?: string } = {}): Promise<string> {
  const session = connect(`http://127.0.0.1:${r.grpcPort}`);
  try {
    const payload = opts.gzip ? gzipSync(message) : message;
    const frame = Buffer.alloc(5 + payload.length);
    frame[0] = opts.gzip ? 1 : 0;
    frame.writeUInt32BE(payload.length, 1);
    payload.copy(frame, 5);
    const stream = session.request({
      ':method': 'POST',
      ':path': opts.path ?? GRPC_TRACE_EXPORT,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...(opts.gzip && { 'grpc-encoding': 'gzip' }),
    });
    stream.end(frame);
    return await new Promise<string>((resolve, reject) => {
      stream.on('trailers', (t) => resolve(String(t['grpc-status'])));
      stream.on('error', reject);
      stream.resume();
    });
  } finally {
    session.close();
  }
}

describe('the OTLP trace receiver', () => {
  it('takes OTLP/HTTP protobuf and gzip JSON, and OTLP/gRPC plain and gzip, spans to its callback', async () => {
    const { r, got } = await start();
    const pb = await post(r, PB, { 'content-type': 'application/x-protobuf' });
    expect([pb.status, (await pb.arrayBuffer()).byteLength]).toEqual([200, 0]);
    const json = await post(r, gzipSync(JSON_BODY), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect([json.status, await json.text()]).toEqual([200, '{}']);
    expect(await grpcExport(r, PB)).toBe('0');
    expect(await grpcExport(r, PB, { gzip: true })).toBe('0');
    expect(r.counts()).toMatchObject({ requests: 4, spans: 8 });
    expect(got.map((s) => s.attributes['gen_ai.request.id'])).toEqual(Array(4).fill(['cmpl-lf-0001-42', 'cmpl-lf-0001-43']).flat());
  });

  it('refuses what it cannot take, with the status each protocol uses, and counts each reason', async () => {
    const { r, got } = await start(2048);
    expect((await post(r, Buffer.from([0x0a, 0xff, 0x01]), { 'content-type': 'application/x-protobuf' })).status).toBe(400);
    expect((await post(r, Buffer.from('{"resourceSpans":7}'), { 'content-type': 'application/json' })).status).toBe(400);
    expect((await post(r, Buffer.alloc(4096), { 'content-type': 'application/x-protobuf' })).status).toBe(413);
    expect((await post(r, PB, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(r, PB, { 'content-type': 'application/x-protobuf' }, '/v1/metrics')).status).toBe(404);
    expect((await post(r, PB, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' })).status).toBe(400);
    expect(await grpcExport(r, Buffer.from([0x0a, 0xff, 0x01]))).toBe('3');
    expect(await grpcExport(r, PB, { path: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export' })).toBe('12');
    expect(r.counts().refused).toEqual({ malformed: 3, too_large: 1, unsupported_media_type: 1, not_found: 2, bad_compression: 1 });
    expect([r.counts().requests, got]).toEqual([0, []]);
  });
});
