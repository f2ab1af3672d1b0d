// autocannon driving the same POST SSE load: one connection per stream, each waiting for its
// whole response (pipelining 1), so it is a closed loop of `concurrency` streams. It has no
// notion of chunks; it reports responses and bytes, and cuts what is in flight at the end.
//
// Usage: node dist/bench/autocannon-client.js --url BASE --concurrency N --tokens T --duration-s D --gap-ms G --first-ms F
import { createRequire } from 'node:module';
import type { ClientReport } from './client-args.js';
import { chatBody, parseClientArgv } from './client-args.js';
import { pacingHeaders } from './paced-server.js';

// Only the fields used here; autocannon ships no types and none are installed for it.
interface AutocannonResult {
  requests: { total: number };
  throughput: { total: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
const load = parseClientArgv(process.argv.slice(2));
const url = `${load.baseUrl.replace(/\/+$/, '')}/chat/completions`;

const cpu0 = process.cpuUsage();
const t0 = performance.now();
const result = await autocannon({
  url,
  method: 'POST',
  body: chatBody(load.tokens),
  headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...pacingHeaders(load.gapMs, load.firstMs) },
  connections: load.concurrency,
  pipelining: 1,
  duration: load.durationS,
  timeout: 60,
});
const cpu = process.cpuUsage(cpu0);
const report: ClientReport = {
  cpu_ms: (cpu.user + cpu.system) / 1000,
  wall_ms: performance.now() - t0,
  responses: result.requests.total,
  chunks_seen: null,
  bytes: result.throughput.total,
  errors: result.errors + result.timeouts + result.non2xx,
  note: 'autocannon drives POST with a streamed response but only counts whole responses; streams in flight at the end are cut',
};
process.stdout.write(`${JSON.stringify(report)}\n`);
