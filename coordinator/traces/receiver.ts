// The coordinator's OTLP trace receiver: what the OpenTelemetry Collector's OTLP receiver accepts for
// traces — OTLP/HTTP (POST /v1/traces, protobuf or JSON, optionally gzip) and OTLP/gRPC
// (TraceService/Export over cleartext HTTP/2) — so a server started with
// `--otlp-traces-endpoint` points at the coordinator directly. Bounded: a body past the size limit is
// refused before it is held, every refusal is counted by reason, and spans go to one callback that
// folds or streams them; nothing is kept here.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  createServer as createHttp2Server,
  type Http2Server,
  constants as h2,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeTraceRequest } from './otlp-proto.js';
import { decodeTraceRequestJson, OtlpDecodeError, type OtlpSpan } from './span.js';

/** The largest export request body accepted, compressed or not (the Collector's default is 20 MiB; a server's batch is far smaller). */
export const MAX_OTLP_BODY_BYTES = 16 * 1024 * 1024;

/** The gRPC method an OTLP trace exporter calls. */
export const GRPC_TRACE_EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/** Why export requests were refused, each counted. */
export type RefusalReason = 'malformed' | 'too_large' | 'unsupported_media_type' | 'not_found' | 'bad_compression';

/** What the receiver has taken and refused so far. */
export interface ReceiverCounts {
  requests: number;
  spans: number;
  refused: Record<RefusalReason, number>;
}

/** A running receiver: its ports and counts, and how to stop it. */
export interface TraceReceiver {
  httpPort: number;
  grpcPort: number;
  counts(): ReceiverCounts;
  close(): Promise<void>;
}

class Refused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

/** Decodes one export request body by its media type, after undoing its content encoding. */
function decodeBody(body: Buffer, contentType: string, encoding: string): OtlpSpan[] {
  let raw = body;
  if (encoding === 'gzip') {
    try {
      raw = gunzipSync(body, { maxOutputLength: MAX_OTLP_BODY_BYTES });
    } catch {
      throw new Refused('bad_compression', 'gzip body that does not inflate within the size limit');
    }
  } else if (encoding !== '' && encoding !== 'identity') throw new Refused('bad_compression', `content encoding ${encoding}`);
  try {
    if (contentType.startsWith('application/x-protobuf') || contentType.startsWith('application/protobuf'))
      return decodeTraceRequest(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength));
    if (contentType.startsWith('application/json')) return decodeTraceRequestJson(raw.toString('utf8'));
  } catch (err) {
    if (err instanceof OtlpDecodeError) throw new Refused('malformed', err.message);
    throw err;
  }
  throw new Refused('unsupported_media_type', `content type ${contentType || '(none)'}`);
}

/** Reads a body up to the limit; refuses (without holding more) past it. */
function readBody(stream: NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (c: Buffer) => {
      size += c.length;
      // Past the limit nothing more is held; the caller answers at once and closes the connection.
      if (size > limit) return reject(new Refused('too_large', `body over ${limit} bytes`));
      chunks.push(c);
    });
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

const HTTP_STATUS: Record<RefusalReason, number> = {
  malformed: 400,
  too_large: 413,
  unsupported_media_type: 415,
  not_found: 404,
  bad_compression: 400,
};
const GRPC_STATUS: Record<RefusalReason, number> = {
  malformed: 3,
  too_large: 8,
  unsupported_media_type: 3,
  not_found: 12,
  bad_compression: 3,
};

/** Starts the receiver on `host` (gRPC on `grpcHost` when given), HTTP and gRPC each on its own port (0: any free one). */
export async function startTraceReceiver(opts: {
  host: string;
  httpPort: number;
  grpcHost?: string;
  grpcPort: number;
  onSpans: (spans: OtlpSpan[]) => void;
  maxBodyBytes?: number;
}): Promise<TraceReceiver> {
  const limit = opts.maxBodyBytes ?? MAX_OTLP_BODY_BYTES;
  const counts: ReceiverCounts = {
    requests: 0,
    spans: 0,
    refused: { malformed: 0, too_large: 0, unsupported_media_type: 0, not_found: 0, bad_compression: 0 },
  };
  const take = (spans: OtlpSpan[]): void => {
    counts.requests++;
    counts.spans += spans.length;
    if (spans.length > 0) opts.onSpans(spans);
  };
  const refuse = (err: unknown): RefusalReason => {
    const reason = err instanceof Refused ? err.reason : 'malformed';
    counts.refused[reason]++;
    return reason;
  };

  const http = createHttpServer((req, res) => void onHttp(req, res));
  async function onHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = String(req.headers['content-type'] ?? '').startsWith('application/json');
    try {
      if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/traces')
        throw new Refused('not_found', `${req.method} ${req.url}`);
      const body = await readBody(req, limit);
      take(decodeBody(body, String(req.headers['content-type'] ?? ''), String(req.headers['content-encoding'] ?? '')));
      // An empty ExportTraceServiceResponse: zero protobuf bytes, or {} in JSON.
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    } catch (err) {
      const reason = refuse(err);
      res.writeHead(HTTP_STATUS[reason], { 'content-type': 'text/plain', connection: 'close' }).end(`${(err as Error).message}\n`);
    }
  }

  const grpc = createHttp2Server();
  // Exporters keep their HTTP/2 session open between exports: closing must end them, not wait.
  const sessions = new Set<ServerHttp2Session>();
  grpc.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  grpc.on('stream', (stream, headers) => void onGrpc(stream, headers));
  async function onGrpc(stream: ServerHttp2Stream, headers: Record<string, string | string[] | undefined>): Promise<void> {
    const end = (status: number, message = ''): void => {
      if (stream.destroyed) return;
      if (!stream.headersSent)
        stream.respond({ [h2.HTTP2_HEADER_STATUS]: 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () =>
        stream.sendTrailers({ 'grpc-status': String(status), ...(message && { 'grpc-message': encodeURIComponent(message) }) }),
      );
      // An empty response message: not compressed, length 0.
      stream.end(status === 0 ? Buffer.alloc(5) : undefined);
    };
    try {
      if (headers[h2.HTTP2_HEADER_PATH] !== GRPC_TRACE_EXPORT) throw new Refused('not_found', String(headers[h2.HTTP2_HEADER_PATH]));
      const body = await readBody(stream, limit + 5);
      if (body.length < 5) throw new Refused('malformed', 'gRPC message shorter than its 5-byte prefix');
      const compressed = body[0] === 1;
      const length = body.readUInt32BE(1);
      if (length !== body.length - 5) throw new Refused('malformed', `gRPC message of ${body.length - 5} bytes says ${length}`);
      const encoding = compressed ? String(headers['grpc-encoding'] ?? '') : '';
      take(decodeBody(body.subarray(5), 'application/x-protobuf', encoding));
      end(0);
    } catch (err) {
      const reason = refuse(err);
      end(GRPC_STATUS[reason], (err as Error).message);
    }
  }

  const listen = (server: Server | Http2Server, port: number, host: string): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
    });
  const httpPort = await listen(http, opts.httpPort, opts.host);
  const grpcPort = await listen(grpc, opts.grpcPort, opts.grpcHost ?? opts.host).catch(async (err: unknown) => {
    await new Promise((r) => http.close(r));
    throw err;
  });
  return {
    httpPort,
    grpcPort,
    counts: () => structuredClone(counts),
    close: async () => {
      http.closeAllConnections();
      for (const session of sessions) session.destroy();
      await Promise.all([new Promise((r) => http.close(r)), new Promise((r) => grpc.close(r))]);
    },
  };
}
