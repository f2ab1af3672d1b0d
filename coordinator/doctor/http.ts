// One bounded HTTP exchange for the doctor: a deadline per call, a cap on the body, and every way
// a call can fail named in words a user can act on (nothing listens, DNS, TLS, a timeout, a reset)
// instead of a stack trace. Nothing here throws.
import { Agent, type Dispatcher, request, setGlobalDispatcher } from 'undici';

/** A doctor call never reads more than this (a models list or a short stream is a few KiB). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Why a call got no HTTP answer. */
export type NetFailure = 'refused' | 'dns' | 'timeout' | 'tls' | 'closed' | 'other';

/** What one call gave: an HTTP answer, or why there was none. */
export interface Exchange {
  url: string;
  status: number | null;
  contentType: string;
  body: string;
  /** Milliseconds from sending to the first body bytes; null without an answer. */
  firstByteMs: number | null;
  totalMs: number;
  failure: { kind: NetFailure; code: string; message: string } | null;
}

export interface CallOptions {
  method?: 'GET' | 'POST';
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs: number;
}

/** A connection pool that counts the requests sent through it, so the report states how many were made. */
export class CountingAgent extends Agent {
  requests = 0;
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.requests++;
    return super.dispatch(options, handler);
  }
}

/**
 * One pool for a doctor session, also made undici's global one so the calibration's tokenize
 * calls (which use the global pool) are counted too; the doctor is its own process.
 */
export function doctorDispatcher(): CountingAgent {
  const agent = new CountingAgent({ connections: 2, pipelining: 0, connect: { timeout: 10_000 } });
  setGlobalDispatcher(agent);
  return agent;
}

/** Makes one call; never throws. */
export async function call(url: string, o: CallOptions, dispatcher: Agent): Promise<Exchange> {
  const t0 = performance.now();
  const signal = AbortSignal.timeout(o.timeoutMs);
  const out: Exchange = { url, status: null, contentType: '', body: '', firstByteMs: null, totalMs: 0, failure: null };
  try {
    const res = await request(url, {
      dispatcher,
      signal,
      method: o.method ?? 'GET',
      headers: { ...(o.body !== undefined && { 'content-type': 'application/json' }), ...o.headers },
      ...(o.body !== undefined && { body: JSON.stringify(o.body) }),
    });
    out.status = res.statusCode;
    out.contentType = String(res.headers['content-type'] ?? '');
    let size = 0;
    const parts: Buffer[] = [];
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      out.firstByteMs ??= performance.now() - t0;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.body.destroy();
        break;
      }
      parts.push(chunk);
    }
    out.body = Buffer.concat(parts).toString('utf8');
  } catch (err) {
    out.failure = signal.aborted
      ? { kind: 'timeout', code: 'TIMEOUT', message: `no complete answer within ${o.timeoutMs} ms` }
      : describeFailure(err);
  }
  out.totalMs = performance.now() - t0;
  return out;
}

const TLS_CODES = /^(ERR_SSL|ERR_TLS|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_(VERIFY|GET)|EPROTO$|ERR_SSL_WRONG_VERSION)/;

/** Names a failed call: the innermost error code decides its kind. */
export function describeFailure(err: unknown): { kind: NetFailure; code: string; message: string } {
  const e = err as Error & { code?: string; cause?: Error & { code?: string } };
  const code = e.cause?.code ?? e.code ?? e.name;
  const message = e.cause?.message ?? e.message;
  if (code === 'ECONNREFUSED') return { kind: 'refused', code, message };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { kind: 'dns', code, message };
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') return { kind: 'timeout', code, message };
  if (TLS_CODES.test(code) || /SSL|certificate|TLS/i.test(message)) return { kind: 'tls', code, message };
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return { kind: 'closed', code, message };
  return { kind: 'other', code, message };
}
