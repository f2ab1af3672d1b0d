// A minimal paced OpenAI chat streaming server, run as its own process so its CPU never mixes
// with a client's. Each token is its own write (and, with Nagle off, its own TCP segment) at a
// fixed gap, then one usage chunk and [DONE]. It records its own ground truth per request (the
// wall-clock instant it received the request and the instant it wrote the first token), keyed
// by `x-request-id`, on the same anchored clock the agents use.
//
// Usage: node dist/bench/paced-sse-server.js [--gap-ms 20] [--first-ms 20]
// Per request, `x-paced-gap-ms` and `x-paced-first-ms` override the gaps and `x-paced-jitter-ms`
// adds a pseudo-random 0…J ms to the first token (so closed-loop streams that start together do
// not stay in lockstep forever); `max_tokens` in the body sets the token count. GET /stats and GET /truth (which also clears it) read the counters.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { anchoredClock } from '../shared/clock.js';
import { stringifyExact } from '../shared/json.js';

const clock = steadyClock();
const TOKEN = Buffer.from(
  `data: ${JSON.stringify({
    id: 'chatcmpl-paced',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'paced',
    choices: [{ index: 0, delta: { content: ' tok' }, finish_reason: null }],
  })}\n\n`,
);
// The ground truth's clock: the median of 15 anchorings, so one preempted anchoring (seen: 160 µs
// off) does not bias every truth row. Same method as the agents', only repeated.
function steadyClock(): { nowNs(): bigint } {
  const offsets = Array.from({ length: 15 }, () => {
    const c = anchoredClock();
    return c.nowNs() - process.hrtime.bigint();
  }).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const offset = offsets[7]!;
  return { nowNs: () => process.hrtime.bigint() + offset };
}

const MAX_TOKENS = /"max_tokens"\s*:\s*(\d+)/;
/** Ground-truth rows kept between two reads of /truth (bounded: a run that never reads stays small). */
const MAX_TRUTH_ROWS = 500_000;

interface Truth {
  arrivalNs: bigint;
  firstTokenNs: bigint | null;
}

const stats = { connections: 0, requests: 0, completed: 0, cut: 0, tokens_written: 0, active: 0, max_active: 0 };
const truth = new Map<string, Truth>();

function header(req: IncomingMessage, name: string, fallback: number): number {
  const v = Number(req.headers[name]);
  return Number.isFinite(v) && v >= 0 ? v : fallback;
}

// A fixed-seed LCG: the same jitter sequence on every run.
let lcg = 12345;
function nextUniform(): number {
  lcg = (Math.imul(lcg, 1664525) + 1013904223) >>> 0;
  return lcg / 2 ** 32;
}

function usageEvent(tokens: number): string {
  const usage = { prompt_tokens: 16, completion_tokens: tokens, total_tokens: 16 + tokens };
  return `data: ${JSON.stringify({ id: 'chatcmpl-paced', object: 'chat.completion.chunk', created: 0, model: 'paced', choices: [], usage })}\n\ndata: [DONE]\n\n`;
}

// Streams `tokens` tokens, each due at an absolute offset from the first (start + k·gap), so a
// late timer never shifts the tokens after it.
function stream(res: ServerResponse, tokens: number, firstMs: number, gapMs: number, row: Truth | undefined): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  const startMs = performance.now() + firstMs;
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  stats.active++;
  stats.max_active = Math.max(stats.max_active, stats.active);
  const tick = (): void => {
    if (row && sent === 0) row.firstTokenNs = clock.nowNs();
    res.write(TOKEN);
    sent++;
    stats.tokens_written++;
    if (sent >= tokens) {
      res.end(usageEvent(tokens));
      return;
    }
    timer = setTimeout(tick, Math.max(0, startMs + sent * gapMs - performance.now()));
  };
  res.once('close', () => {
    clearTimeout(timer);
    stats.active--;
    if (sent >= tokens) stats.completed++;
    else stats.cut++;
  });
  if (tokens === 0) res.end(usageEvent(0));
  else timer = setTimeout(tick, firstMs);
}

function chat(req: IncomingMessage, res: ServerResponse, defaults: { gapMs: number; firstMs: number }): void {
  const arrivalNs = clock.nowNs();
  stats.requests++;
  const id = req.headers['x-request-id'];
  let row: Truth | undefined;
  if (typeof id === 'string' && truth.size < MAX_TRUTH_ROWS) {
    row = { arrivalNs, firstTokenNs: null };
    truth.set(id, row);
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => {
    if (body.length < 4096) body += c;
  });
  req.on('end', () => {
    const tokens = Number(MAX_TOKENS.exec(body)?.[1] ?? 16);
    const firstMs = header(req, 'x-paced-first-ms', defaults.firstMs) + header(req, 'x-paced-jitter-ms', 0) * nextUniform();
    stream(res, tokens, firstMs, header(req, 'x-paced-gap-ms', defaults.gapMs), row);
  });
}

function takeTruth(): string {
  let out = '';
  for (const [id, t] of truth) out += `${stringifyExact({ id, arrival_unix_ns: t.arrivalNs, first_token_unix_ns: t.firstTokenNs })}\n`;
  truth.clear();
  return out;
}

function main(): void {
  const { values } = parseArgs({ options: { 'gap-ms': { type: 'string', default: '20' }, 'first-ms': { type: 'string', default: '20' } } });
  const defaults = { gapMs: Number(values['gap-ms']), firstMs: Number(values['first-ms']) };
  const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'POST' && path.endsWith('/chat/completions')) return chat(req, res, defaults);
    if (path === '/stats') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
    if (path === '/truth') return void res.writeHead(200, { 'content-type': 'application/x-ndjson' }).end(takeTruth());
    if (path.endsWith('/models')) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
    res.writeHead(404).end();
  });
  server.on('connection', () => void stats.connections++);
  // A deep accept queue: 10,000 streams are opened in one burst.
  server.listen({ host: '127.0.0.1', port: 0, backlog: 65535 }, () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${JSON.stringify({ event: 'listening', base_url: `http://127.0.0.1:${port}/v1`, pid: process.pid })}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
}

main();
