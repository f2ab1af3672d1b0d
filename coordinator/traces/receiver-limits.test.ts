// The receiver's bounds where the first tests leave off: an oversized gRPC message, a gzip body that
// inflates past the limit, a gRPC frame whose length lies; each refused and counted, and the
// receiver still takes the next good export.
import { readFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { GRPC_TRACE_EXPORT, MAX_OTLP_BODY_BYTES, startTraceReceiver, type TraceReceiver } from './receiver.js';

const PB = readFileSync(new URL('../../test/fixtures/otlp/spans.pb', import.meta.url));

let receiver: TraceReceiver | undefined;
afterEach(async () => receiver?.close());

/** One gRPC call with `frame` as the whole request body; resolves with its grpc-status. */
async function grpcCall(r: TraceReceiver, frame: Buffer, headers: Record<string, string> = {}): Promise<string> {
  const session = connect(`http://127.0.0.1:${r.grpcPort}`);
  try {
    const stream = session.request({
      ':method': 'POST',
      ':path': GRPC_TRACE_EXPORT,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...headers,
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

const framed = (message: Buffer, compressed = false, length = message.length): Buffer => {
  const frame = Buffer.alloc(5 + message.length);
  frame[0] = compressed ? 1 : 0;
  frame.writeUInt32BE(length, 1);
  message.copy(frame, 5);
  return frame;
};

describe('the OTLP trace receiver at its limits', () => {
  it('refuses an oversized gRPC message (RESOURCE_EXHAUSTED), a lying frame length, and takes the next good export', async () => {
    receiver = await startTraceReceiver({ host: '127.0.0.1', httpPort: 0, grpcPort: 0, onSpans: () => {}, maxBodyBytes: 2048 });
    expect(await grpcCall(receiver, framed(Buffer.alloc(4096, 0x0a)))).toBe('8');
    expect(await grpcCall(receiver, framed(PB, false, PB.length + 10))).toBe('3');
    expect(await grpcCall(receiver, framed(PB))).toBe('0');
    expect(receiver.counts()).toMatchObject({ requests: 1, spans: 2, refused: { too_large: 1, malformed: 1 } });
  });

  it('refuses a small gzip body that would inflate past the limit, on HTTP and on gRPC, without holding it', async () => {
    receiver = await startTraceReceiver({ host: '127.0.0.1', httpPort: 0, grpcPort: 0, onSpans: () => {} });
    const bomb = gzipSync(Buffer.alloc(MAX_OTLP_BODY_BYTES + 1024));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const http = await fetch(`http://127.0.0.1:${receiver.httpPort}/v1/traces`, {
      method: 'POST',
      body: bomb,
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
    });
    expect(http.status).toBe(400);
    expect(await grpcCall(receiver, framed(bomb, true), { 'grpc-encoding': 'gzip' })).toBe('3');
    expect(receiver.counts()).toMatchObject({ requests: 0, refused: { bad_compression: 2 } });
  });
});
