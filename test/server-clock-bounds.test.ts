// suite: timing
// The server's clock from its spans when they are hard to read, end to end (a real coordinator and
// agent against a loopback chat server emitting vLLM's span through the official OpenTelemetry JS
// exporter, its clock set a known distance from the machine's and drifting):
// - spans that end after the response's last write (an HTTP server span), some after the client
//   read the last byte: the clock is still fitted, those spans counted, and every request split;
// - requests of 20 s and more on a clock 500 ppm fast: every request bounds the clock at its own
//   instants, and every one is split;
// - replicas under one service.name, told apart by service.instance.id: one clock each.
// In each, every request's offset (at its send) lies within the uncertainty the run states.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { freePort, onlyRunDir, readRequests, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';
import { startTracedTarget, type TracedTargetOptions } from './traced-target.js';

// LOADFLEET_SOAK=1: the long requests' run is three times as long.
const SOAK = process.env.LOADFLEET_SOAK === '1';

let stop: (() => Promise<void>) | undefined;
afterEach(async () => stop?.());

interface Load {
  durationS: number;
  rate: number;
  outputTokens: number;
  timeoutS: number;
}

async function runTraced(
  target: Omit<TracedTargetOptions, 'endpoint' | 'protocol'>,
  load: Load,
): Promise<{ run: any; rows: any[]; startedMs: number }> {
  for (let attempt = 1; ; attempt++) {
    const [http, grpc] = [await freePort(), await freePort()];
    const startedMs = Date.now();
    const t = await startTracedTarget({ ...target, endpoint: `http://127.0.0.1:${http}/v1/traces`, protocol: 'http' });
    stop = t.stop;
    const work = tempDir();
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'server-clock',
      seed: 9,
      duration_s: load.durationS,
      drain_timeout_s: load.timeoutS,
      target: { base_url: t.baseUrl, api: 'chat', model: 'm', timeout_s: load.timeoutS },
      traces: { http: `127.0.0.1:${http}`, grpc: `127.0.0.1:${grpc}`, flush_s: 10 },
      classes: [
        {
          name: 'c',
          prompt: { input_tokens: 16, output_tokens: load.outputTokens },
          load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: load.durationS, rate_per_s: load.rate }] },
        },
      ],
    };
    const res = await runCoordinator(['--agents', '1', '--plan', writePlan(work, plan), '--out', join(work, 'out'), '--quiet']);
    if (res.code !== 0 && res.stderr.includes('LF_TRACES_LISTEN') && attempt < 3) {
      await t.stop();
      continue;
    }
    if (res.code !== 0) throw new Error(`coordinator exited ${res.code}:\n${res.stderr}`);
    const dir = onlyRunDir(join(work, 'out'));
    return { run: readRunJson(dir), rows: readRequests(dir), startedMs };
  }
}

// The server's true offset (ns) at a run instant: its shift plus what its drift gained since the
// target started (known to a few ms, which at 500 ppm is a few µs).
const truth = (offsetMs: number, driftPpm: number, startedMs: number, atNs: bigint): number =>
  offsetMs * 1e6 + (Number(atNs) / 1e6 - startedMs) * driftPpm;

// Every request split, at its send within the stated uncertainty (and 0.1 ms for the two processes' clock anchors).
function expectSplit(rows: any[], offsetMs: (row: any) => number, driftPpm: (row: any) => number, startedMs: number): number {
  let worst = 0;
  for (const row of rows) {
    expect(row.status).toBe('ok');
    expect(row.to_server_ms, 'to_server_ms').not.toBeNull();
    expect(row.from_server_ms, 'from_server_ms').not.toBeNull();
    const err = Math.abs(row.span_offset_ns - truth(offsetMs(row), driftPpm(row), startedMs, BigInt(row.sent_unix_ns)));
    expect(err).toBeLessThanOrEqual(row.span_offset_uncertainty_ns + 0.1e6);
    worst = Math.max(worst, err);
  }
  return worst;
}

describe("the server's clock, each bound at its own instant", () => {
  it('fits a server whose spans end after the last write, counting those that end after the last byte; every request split', {
    timeout: 90_000,
  }, async () => {
    const { run, rows, startedMs } = await runTraced(
      { prefillMs: 5, itlMs: 2, tokens: 8, offsetMs: 137, driftPpm: 300, spanEnd: 'after-write' },
      { durationS: 6, rate: 36, outputTokens: 8, timeoutS: 10 },
    );
    const clock = run.server_spans.clocks.vllm;
    const worst = expectSplit(
      rows,
      () => 137,
      () => 300,
      startedMs,
    );
    console.log(
      `spans after the last write: ${rows.length} requests, worst offset error ${(worst / 1e6).toFixed(3)} ms; ${JSON.stringify(clock)}`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(200);
    expect(clock).toMatchObject({ kind: 'fitted', keyed_by: 'service.name', slack_ns: 0, requests: rows.length });
    expect(clock.caveat).toMatch(/service\.name alone/);
    // Each span names its first token: its end is only checked, and those ending after the last byte are counted.
    expect(clock.bounds).toMatchObject({ end: 0, end_checked: rows.length, first_token: rows.length });
    expect(clock.end_bounds_crossing).toBeLessThanOrEqual(rows.length);
    expect(clock.end_bounds_crossing_max_ns > 0).toBe(clock.end_bounds_crossing > 0);
    expect(clock.offset_uncertainty_ns).toBeLessThan(2e6);
    expect(clock.drift_bounded).toBe(true);
    expect(Math.abs(clock.drift_ppm - 300)).toBeLessThanOrEqual(clock.drift_uncertainty_ppm + 1);
  });

  it('fits a clock 500 ppm fast from requests of 20 s and more, each bound at its own instant; every request split', {
    timeout: 120_000,
  }, async () => {
    const durationS = SOAK ? 30 : 8;
    const { run, rows, startedMs } = await runTraced(
      { prefillMs: 20, itlMs: 20, tokens: 1000, offsetMs: -80, driftPpm: 500 },
      { durationS, rate: 2, outputTokens: 1000, timeoutS: 60 },
    );
    const clock = run.server_spans.clocks.vllm;
    const worst = expectSplit(
      rows,
      () => -80,
      () => 500,
      startedMs,
    );
    const e2e = rows.map((r) => Number(BigInt(r.done_unix_ns) - BigInt(r.sent_unix_ns)) / 1e9);
    console.log(
      `long requests: ${rows.length} of ${Math.min(...e2e).toFixed(1)}–${Math.max(...e2e).toFixed(1)} s, worst offset error ${(worst / 1e6).toFixed(3)} ms; ${JSON.stringify(clock)}`,
    );
    expect(rows.length).toBe(durationS * 2);
    expect(Math.min(...e2e)).toBeGreaterThanOrEqual(20);
    expect(clock).toMatchObject({ kind: 'fitted', requests: rows.length });
    expect(clock.drift_bounded).toBe(true);
    expect(Math.abs(clock.drift_ppm - 500)).toBeLessThanOrEqual(clock.drift_uncertainty_ppm + 1);
    // Each request's offset at its send is bounded by the requests around it; the clock's largest
    // uncertainty is at the last bytes, 20 s past the last send, where only the drift's range reaches.
    for (const row of rows) expect(row.span_offset_uncertainty_ns).toBeLessThan(2e6);
    expect(clock.offset_uncertainty_ns).toBeLessThan(20e6);
  });

  it('fits one clock per replica under one service.name, told apart by service.instance.id', { timeout: 90_000 }, async () => {
    const replicas = [
      { instanceId: 'r0', offsetMs: -50, driftPpm: 0 },
      { instanceId: 'r1', offsetMs: 0, driftPpm: 200 },
      { instanceId: 'r2', offsetMs: 80, driftPpm: -300 },
    ];
    const { run, rows, startedMs } = await runTraced(
      { prefillMs: 5, itlMs: 2, tokens: 6, offsetMs: 0, replicas },
      { durationS: 4, rate: 30, outputTokens: 6, timeoutS: 10 },
    );
    const clocks = run.server_spans.clocks;
    expect(Object.keys(clocks).sort()).toEqual(['vllm@r0', 'vllm@r1', 'vllm@r2']);
    for (const r of replicas)
      expect(clocks[`vllm@${r.instanceId}`]).toMatchObject({
        kind: 'fitted',
        service: 'vllm',
        instance: r.instanceId,
        keyed_by: 'service.instance.id',
      });
    const of = (row: any) => replicas.find((r) => row.span_clocks === `vllm@${r.instanceId}`)!;
    const worst = expectSplit(
      rows,
      (row) => of(row).offsetMs,
      (row) => of(row).driftPpm,
      startedMs,
    );
    console.log(`replicas: ${rows.length} requests, worst offset error ${(worst / 1e6).toFixed(3)} ms; ${JSON.stringify(clocks)}`);
  });
});
