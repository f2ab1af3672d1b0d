// One scrape over HTTP: GET the exposition with a deadline, read at most MAX_BODY_BYTES, parse
// it. Every failure comes back as a classified error (unreachable, timeout, HTTP status, garbled,
// too large) — nothing is thrown, so one bad endpoint never stops a run.
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'undici';
import type { PromSample } from '../../figures/server/prom-parse.js';
import { parseExposition } from '../../figures/server/prom-parse.js';
import type { ScrapeErrorKind } from '../../figures/server/types.js';

/** A body larger than this is refused: an exposition of the serving stack is a few hundred KiB. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** What one GET gave. */
export interface FetchOutcome {
  httpStatus: number | null;
  /** The body as text, when one arrived (kept for the .prom snapshots even when garbled). */
  text: string | null;
  series: PromSample[] | null;
  families: Set<string>;
  error: { kind: ScrapeErrorKind; message: string } | null;
}

/** A keep-alive connection pool for scrapes (one per run; closed with the scraper). */
export function scrapeDispatcher(): Agent {
  return new Agent({ connections: 4, pipelining: 0, keepAliveTimeout: 10_000 });
}

/** Fetches and parses `url`, giving up after `timeoutMs`; with `bearerTokenFile`, authenticated by the token in it. */
export async function fetchExposition(url: string, timeoutMs: number, dispatcher: Agent, bearerTokenFile?: string): Promise<FetchOutcome> {
  const signal = AbortSignal.timeout(Math.max(1, Math.round(timeoutMs)));
  let httpStatus: number | null = null;
  let text: string | null = null;
  const headers: Record<string, string> = { accept: 'text/plain;version=0.0.4;q=1,*/*;q=0.1' };
  if (bearerTokenFile !== undefined) {
    // Read every time: projected service-account tokens are rotated under the running process.
    const token = await readFile(bearerTokenFile, 'utf8').then(
      (t) => t.trim(),
      (err: Error) => err,
    );
    if (token instanceof Error) return fail(null, null, 'auth_file', `bearer_token_file ${bearerTokenFile}: ${token.message}`);
    if (token === '') return fail(null, null, 'auth_file', `bearer_token_file ${bearerTokenFile} is empty`);
    headers.authorization = `Bearer ${token}`;
  }
  try {
    const res = await request(url, { dispatcher, signal, headers });
    httpStatus = res.statusCode;
    text = await readCapped(res.body);
    if (text === null) return fail(httpStatus, null, 'too_large', `body larger than ${MAX_BODY_BYTES} bytes`);
    if (httpStatus !== 200) return fail(httpStatus, text, 'http_status', `HTTP ${httpStatus}: ${text.slice(0, 200).trim()}`);
  } catch (err) {
    if (signal.aborted) return fail(httpStatus, text, 'timeout', `no complete answer within ${timeoutMs} ms`);
    const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
    return fail(httpStatus, text, 'unreachable', [e.code ?? e.cause?.code, e.cause?.message ?? e.message].filter(Boolean).join(': '));
  }
  const parsed = parseExposition(text);
  if (parsed.problems.length > 0) {
    const more = parsed.problems.length > 1 ? ` (and ${parsed.problems.length - 1} more lines)` : '';
    return fail(httpStatus, text, 'garbled', `${parsed.problems[0]}${more}`);
  }
  return { httpStatus, text, series: parsed.samples, families: new Set(parsed.types.keys()), error: null };
}

function fail(httpStatus: number | null, text: string | null, kind: ScrapeErrorKind, message: string): FetchOutcome {
  return { httpStatus, text, series: null, families: new Set(), error: { kind, message } };
}

// Null when the body passes the cap (the rest is discarded and the connection closed).
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      body.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
