// The self-test itself: a couple of seconds of the agent's own request path (client.ts and the
// recorder, the code a run uses) against a loopback SSE server in a child process, measuring
// what one request, one chunk and one finish cost in CPU, what an open stream costs in memory,
// and how the first-token stamp error grows with the event-loop utilisation the load causes.
import { type ChildProcess, spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { request } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent as UndiciAgent } from 'undici';
import { openaiChat } from '../../shared/apis/openai-chat.js';
import { nearestRank } from '../../shared/histogram.js';
import type { ErrorPoint, SelfTestFigures } from '../../shared/self-test.js';
import { ERROR_LEVELS_MS, eluAtError } from '../../shared/self-test.js';
import type { RequestResult } from '../client.js';
import { sendRequest } from '../client.js';
import { loopBusy } from '../loop-busy.js';
import { Recorder } from '../recorder.js';

const SERVER_MAIN = fileURLToPath(new URL('./server.js', import.meta.url));

/** How much the self-test does; the defaults take about two seconds. */
export interface SelfTestSize {
  /** Streams held open at once for the CPU and memory phases (and connections warmed). */
  streams: number;
  /** Further chunks sent to every held stream in the chunk phase. */
  chunkRounds: number;
  /** Closed-loop concurrency of each timing step, ascending. */
  steps: number[];
  /** Length of each timing step, ms (first tokens in its first fifth are warm-up, left out). */
  stepMs: number;
}

export const DEFAULT_SIZE: SelfTestSize = { streams: 256, chunkRounds: 20, steps: [8, 48, 128, 256], stepMs: 300 };

/** What the uncertainty does not claim to cover (as in bench/timing-accuracy.ts): loopback delivery and wake-up. */
const COVER_SLACK_NS = 500_000;

/** Runs the self-test; rejects if the loopback server cannot start or a request fails. */
export async function measureSelf(size: SelfTestSize = DEFAULT_SIZE): Promise<SelfTestFigures> {
  const t0 = performance.now();
  const freeCores = Math.max(0, Math.floor(availableParallelism() - loadavg()[0]!));
  const server = await startServer();
  const dispatcher = new UndiciAgent({ connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
  const base = process.hrtime.bigint();
  const nowNs = (): number => Number(process.hrtime.bigint() - base);
  const recorder = new Recorder([], nowNs, () => {});
  const stopper = new AbortController();
  setMaxListeners(0, stopper.signal); // requests share one abort listener (client.ts); others may add theirs
  const origin = `http://127.0.0.1:${server.port}`;
  const send = (path: string, index: number): Promise<RequestResult> => {
    recorder.issued('self-test', null);
    const sending = sendRequest(
      dispatcher,
      openaiChat,
      {
        className: 'self-test',
        requestIndex: index,
        intendedNs: null,
        origin,
        path,
        headers: { 'content-type': 'application/json' },
        body: '{"model":"self-test","stream":true,"messages":[{"role":"user","content":"hi"}]}',
        timeoutMs: 30_000,
        requireUsage: false,
        countOutput: null,
        canaryMarker: null,
      },
      nowNs,
      stopper.signal,
    );
    loopBusy.settle(); // as a run does (agent/run.ts): building and writing a request is no stamp's delay
    return sending.then((r) => {
      if (r.record.status !== 'ok') throw new Error(`self-test request ${path} ended ${r.record.status}: ${r.record.error ?? ''}`);
      recorder.finished(r.record, r.contentGaps.view());
      r.contentGaps.release(); // pooled arrays go back, as a run's do
      return r;
    });
  };
  try {
    const gc = exposeGc();
    const n = size.streams;
    // Warm: n connections opened and kept alive, so the phases below measure requests, not handshakes.
    await Promise.all(Array.from({ length: n }, (_, i) => send('/warm', i)));
    // Start: n streams that send their headers and first chunk, then are held open, in two
    // halves: the memory figure is the second half's (the cost of one more stream, without the
    // pools and parsers the first streams allocate once), the CPU figure over both.
    const half = Math.floor(n / 2);
    const open: Promise<RequestResult>[] = [];
    const memory: number[] = [];
    let startCpuUs = 0;
    for (const [from, to] of [
      [0, half],
      [half, n],
    ] as const) {
      gc();
      memory.push(memoryNow());
      const cpu0 = process.cpuUsage();
      for (let i = from; i < to; i++) open.push(send('/hold', i));
      await untilServer(() => control(server.port, '/held').then((s) => Number(s) >= to));
      await untilIdle();
      startCpuUs += cpuSince(cpu0);
    }
    const startUs = startCpuUs / n;
    gc();
    // The second half's growth is the cost of one more stream; when a collection between the halves
    // freed more than the second half took (seen on a loaded machine: 0 bytes per stream), that
    // figure is noise, and the growth over both halves (first allocations included: an over-, never
    // an under-estimate) stands in for it.
    const now = memoryNow();
    const secondHalf = (now - memory[1]!) / (n - half);
    const memPerStream = secondHalf > 0 ? secondHalf : Math.max(0, (now - memory[0]!) / n);
    // Chunks: every held stream gets chunkRounds more, one round per timer tick.
    let cpu = process.cpuUsage();
    await control(server.port, `/chunks?n=${size.chunkRounds}`);
    await untilIdle();
    const chunkUs = cpuSince(cpu) / (n * size.chunkRounds);
    // Finish: every held stream ends; each request's end, record and histograms.
    cpu = process.cpuUsage();
    await control(server.port, '/end');
    await Promise.all(open);
    await untilIdle();
    const finishUs = cpuSince(cpu) / n;
    const { curve, covered, total } = await timingSteps(size, server.port, send, nowNs, base);
    const elu_at_error_ms: Record<string, number | null> = {};
    for (const level of ERROR_LEVELS_MS) elu_at_error_ms[`${level}ms`] = round(eluAtError(curve, level), 3);
    return {
      version: 1,
      measured_at: new Date().toISOString(),
      source: 'measured',
      duration_ms: Math.round(performance.now() - t0),
      node: process.version,
      cpus: availableParallelism(),
      free_cores: freeCores,
      cpu_us_per_start: round(startUs, 2)!,
      cpu_us_per_chunk: round(chunkUs, 2)!,
      cpu_us_per_finish: round(finishUs, 2)!,
      memory_bytes_per_stream: Math.round(memPerStream),
      memory_streams: n - half,
      error_curve: curve,
      elu_at_error_ms,
      uncertainty_coverage: total > 0 ? round(covered / total, 4) : null,
    };
  } finally {
    stopper.abort();
    await dispatcher.destroy().catch(() => {});
    server.stop();
  }
}

// Closed-loop steps of rising concurrency: each stream's first chunk comes 0–50 ms after its
// request (spreading the streams' phases), then 9 more 10 ms apart.
async function timingSteps(
  size: SelfTestSize,
  port: number,
  send: (path: string, index: number) => Promise<RequestResult>,
  nowNs: () => number,
  base: bigint,
): Promise<{ curve: ErrorPoint[]; covered: number; total: number }> {
  const curve: ErrorPoint[] = [];
  let covered = 0;
  let total = 0;
  let seq = 0;
  for (const [s, k] of size.steps.entries()) {
    const endNs = nowNs() + size.stepMs * 1e6;
    const fromNs = nowNs() + (size.stepMs / 5) * 1e6;
    const results: RequestResult[] = [];
    let elu: ReturnType<typeof performance.eventLoopUtilization> | undefined;
    const eluTimer = setTimeout(() => (elu = performance.eventLoopUtilization()), size.stepMs / 5);
    const stream = async (): Promise<void> => {
      while (nowNs() < endNs) {
        const i = seq++;
        results.push(await send(`/paced?id=${s}-${i}&n=10&gap=10&first=${Math.floor(Math.random() * 50)}`, i));
      }
    };
    await Promise.all(Array.from({ length: k }, stream));
    clearTimeout(eluTimer);
    const stepElu = elu ? performance.eventLoopUtilization(elu).utilization : performance.eventLoopUtilization().utilization;
    const truth = JSON.parse(await control(port, '/truth')) as Record<string, string>;
    const errors: number[] = [];
    for (const r of results) {
      const rec = r.record;
      const written = truth[`${s}-${rec.request_index}`];
      if (rec.first_content_ns === null || rec.first_content_ns < fromNs || written === undefined) continue;
      const err = rec.first_content_ns - Number(BigInt(written) - base);
      errors.push(err);
      total++;
      if (err <= (rec.first_content_uncertainty_ns ?? 0) + COVER_SLACK_NS) covered++;
    }
    if (errors.length === 0) continue;
    const sorted = Float64Array.from(errors).sort();
    curve.push({ elu: round(stepElu, 3)!, p99_ms: round(nearestRank(sorted, 0.99) / 1e6, 3)!, n: errors.length });
  }
  if (curve.length === 0) throw new Error('the self-test measured no stamp error (no request reached its first token)');
  return { curve, covered, total };
}

function round(v: number | null, digits: number): number | null {
  if (v === null) return null;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

function memoryNow(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return d.user + d.system;
}

// A forced GC makes the memory figure the live bytes, not what the collector has yet to free.
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  return typeof gc === 'function' ? gc : () => {};
}

// Waits until a 20 ms slice of the event loop is nearly idle: the reads of a phase are done.
async function untilIdle(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const before = performance.eventLoopUtilization();
    await new Promise((r) => setTimeout(r, 20));
    if (performance.eventLoopUtilization(before).utilization < 0.05) return;
  }
}

async function untilServer(done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the self-test server did not see every stream within 5 s');
}

function control(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

interface Server {
  port: number;
  stop(): void;
}

function startServer(): Promise<Server> {
  const child: ChildProcess = spawn(process.execPath, [SERVER_MAIN], { stdio: ['pipe', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error('the self-test server did not start within 10 s'));
    }, 10_000);
    child.once('exit', (code) => reject(new Error(`the self-test server exited with code ${code}`)));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf('\n');
      if (nl === -1) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      const port = (JSON.parse(out.slice(0, nl)) as { port: number }).port;
      resolve({
        port,
        stop: () => {
          child.stdin!.end();
          setTimeout(() => child.kill(), 1000).unref();
        },
      });
    });
  });
}
