// Helpers for the simulator's tests: real HTTP calls with per-event arrival times, an SSE splitter
// and a tiny Prometheus text parser. Test-only; the server never imports it.
import { performance } from 'node:perf_hooks';
import { request } from 'undici';

/** A streamed response as the client saw it. */
export interface StreamResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Each event's data field, in order. */
  events: string[];
  /** Milliseconds from sending the request to each event's arrival. */
  atMs: number[];
  /** The error that ended the body, if it did not end cleanly. */
  error: Error | undefined;
}

/** A prompt of exactly `n` tokens (words). */
export function wordsPrompt(n: number, word = 'w'): string {
  return Array.from({ length: n }, (_, i) => `${word}${i}`).join(' ');
}

/** POSTs JSON (or raw text) and reads the body as events as they arrive. */
export async function postStream(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<StreamResult> {
  const startMs = performance.now();
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  const result: StreamResult = { status: res.statusCode, headers: res.headers, events: [], atMs: [], error: undefined };
  let buffer = '';
  try {
    for await (const chunk of res.body) {
      const nowMs = performance.now() - startMs;
      buffer += (chunk as Buffer).toString('utf8');
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        result.events.push(event.startsWith('data: ') ? event.slice('data: '.length) : event);
        result.atMs.push(nowMs);
        end = buffer.indexOf('\n\n');
      }
    }
  } catch (err) {
    result.error = err as Error;
  }
  if (buffer !== '') result.events.push(buffer); // a non-SSE body, or a tail cut short
  return result;
}

/** POSTs JSON; returns the status, headers, raw text and parsed body (`{}` when not a JSON object). */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text);
  } catch {
    // Left empty: callers assert on `text` for non-JSON bodies.
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

/** Parses Prometheus text: every sample keyed `name{labels}`; throws on a line that fits no rule. */
export function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/.test(line)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus line: ${line}`);
    samples.set(`${m[1]}${m[2] ?? ''}`, Number(m[3] === '+Inf' ? Number.POSITIVE_INFINITY : m[3]));
  }
  return samples;
}

/** Sum of every sample of one metric name (across label sets). */
export function sumOf(samples: Map<string, number>, name: string): number {
  let total = 0;
  for (const [key, value] of samples) if (key === name || key.startsWith(`${name}{`)) total += value;
  return total;
}

/** Fetches and parses `/metrics`. */
export async function scrape(baseUrl: string): Promise<Map<string, number>> {
  const res = await request(`${baseUrl}/metrics`);
  return parsePrometheus(await res.body.text());
}
