// The floor for a Node client: undici `dispatch` in a closed loop that only counts bytes and
// socket reads, with no SSE parsing, no timestamps and no recording. Whatever the agent costs
// above this is its own work.
//
// Usage: node dist/bench/bare-undici-client.js --url BASE --concurrency N --tokens T --duration-s D --gap-ms G --first-ms F
//        [--idle-s I] [--ramp-s R]   (the scale suite's floor: wait I s, then start the N streams evenly over R s)
import { Agent, type Dispatcher } from 'undici';
import type { ClientReport } from './client-args.js';
import { chatBody, parseClientArgv } from './client-args.js';
import { pacingHeaders } from './paced-server.js';

const load = parseClientArgv(process.argv.slice(2));
const base = new URL(load.baseUrl);
const path = `${base.pathname.replace(/\/+$/, '')}/chat/completions`;
const body = chatBody(load.tokens);
const headers = { 'content-type': 'application/json', accept: 'text/event-stream', ...pacingHeaders(load.gapMs, load.firstMs) };
const dispatcher = new Agent({ connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
const counts = { responses: 0, chunks: 0, bytes: 0, errors: 0 };

// The smallest handler undici accepts: count, and start the next request when one ends. It is of
// the callback kind undici runs natively, as the agent's is (agent/client.ts says why): a
// controller-kind handler is wrapped per request and keeps the response's raw headers.
class CountingHandler implements Dispatcher.DispatchHandler {
  constructor(private readonly next: () => void) {}
  onConnect(): void {}
  onHeaders(): boolean {
    return true;
  }
  onData(chunk: Buffer): boolean {
    counts.chunks++;
    counts.bytes += chunk.length;
    return true;
  }
  onComplete(): void {
    counts.responses++;
    this.next();
  }
  onError(): void {
    counts.errors++;
    this.next();
  }
}

function run(): Promise<void> {
  const deadline = performance.now() + load.durationS * 1000;
  const rampMs = (load.rampS ?? 0) * 1000;
  let inFlight = 0;
  return new Promise((resolve) => {
    const launch = (): void => {
      inFlight++;
      dispatcher.dispatch(
        { origin: base.origin, path, method: 'POST', headers, body, headersTimeout: 0, bodyTimeout: 0 },
        new CountingHandler(() => {
          inFlight--;
          if (performance.now() < deadline) launch();
          else if (inFlight === 0) resolve();
        }),
      );
    };
    if (rampMs === 0) for (let i = 0; i < load.concurrency; i++) launch();
    else for (let i = 0; i < load.concurrency; i++) setTimeout(launch, (i * rampMs) / load.concurrency);
  });
}

if (load.idleS) await new Promise((r) => setTimeout(r, load.idleS! * 1000));
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await run();
const cpu = process.cpuUsage(cpu0);
const report: ClientReport = {
  cpu_ms: (cpu.user + cpu.system) / 1000,
  wall_ms: performance.now() - t0,
  responses: counts.responses,
  chunks_seen: counts.chunks,
  bytes: counts.bytes,
  errors: counts.errors,
};
process.stdout.write(`${JSON.stringify(report)}\n`);
await dispatcher.close();
