// suite: timing
// The server's spans joined to loadfleet's requests, end to end: a real coordinator and agent run
// a plan with `traces` against a loopback chat server that emits vLLM's `llm_request` span through
// the official OpenTelemetry JS exporter (OTLP/HTTP protobuf, and OTLP/gRPC disaggregated), its
// clock set a known distance from the machine's. The run must place the server's clock within its
// stated uncertainty, and each request's parts must add up to the TTFT it measured.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { freePort, onlyRunDir, readRequests, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';
import { startTracedTarget } from './traced-target.js';

function plan(baseUrl: string, http: number, grpc: number): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: 'spans',
    seed: 3,
    duration_s: 3,
    drain_timeout_s: 5,
    target: { base_url: baseUrl, api: 'chat', model: 'm', timeout_s: 10 },
    traces: { http: `127.0.0.1:${http}`, grpc: `127.0.0.1:${grpc}`, flush_s: 10 },
    classes: [
      {
        name: 'rt',
        prompt: { input_tokens: 16, output_tokens: 6 },
        slo: { ttft_p95_ms: 5000 },
        // Faster than the one engine slot prefills (40 ms each): requests queue behind each other.
        load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 3, rate_per_s: 30 }] },
      },
    ],
  };
}

let stop: (() => Promise<void>) | undefined;
afterEach(async () => stop?.());

type Outcome = { run: any; rows: any[]; spans: string; report: string };

// The target's exporter needs the receiver's ports before the run starts, so the test picks free
// ones; on this shared machine another process can take one first (LF_TRACES_LISTEN), and then the
// target and the run start again on fresh ports.
async function runTraced(start: (http: number, grpc: number) => Promise<{ baseUrl: string; stop(): Promise<void> }>): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    const [http, grpc] = [await freePort(), await freePort()];
    const target = await start(http, grpc);
    stop = target.stop;
    const work = tempDir();
    const p = plan(target.baseUrl, http, grpc);
    const res = await runCoordinator(['--agents', '1', '--plan', writePlan(work, p), '--out', join(work, 'out'), '--quiet']);
    if (res.code !== 0 && res.stderr.includes('LF_TRACES_LISTEN') && attempt < 3) {
      await target.stop();
      continue;
    }
    if (res.code !== 0) throw new Error(`coordinator exited ${res.code}:\n${res.stderr}`);
    const dir = onlyRunDir(join(work, 'out'));
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    return { run: readRunJson(dir), rows: readRequests(dir), spans: read('spans.ndjson'), report: read('report.html') };
  }
}

const PARTS = ['to_server_ms', 'queue_ms', 'prefill_ms', 'unaccounted_ms', 'handoff_ms', 'from_server_ms'];
const sum = (r: any) => PARTS.reduce((s, p) => s + (r[p] ?? 0), 0);
const ttftMs = (r: any) => Number(BigInt(r.first_content_unix_ns) - BigInt(r.sent_unix_ns)) / 1e6;

describe('server spans joined to the requests', () => {
  it('places a server 250 ms ahead within its stated uncertainty, and breaks each TTFT down (OTLP/HTTP, by trace id and request id)', {
    timeout: 90_000,
  }, async () => {
    const {
      run: r,
      rows,
      spans,
      report,
    } = await runTraced((http) =>
      startTracedTarget({
        endpoint: `http://127.0.0.1:${http}/v1/traces`,
        protocol: 'http',
        prefillMs: 40,
        itlMs: 5,
        tokens: 6,
        offsetMs: 250,
        ownTraceEvery: 3,
      }),
    );
    const s = r.server_spans;
    expect(rows).toHaveLength(90);
    // Every third span started its own trace: it joins by the request id the server kept.
    expect(s.receiver).toMatchObject({ by_trace_id: 60, by_request_id: 30, foreign: 0 });
    expect(Object.values(s.receiver.refused).every((n) => n === 0)).toBe(true);
    expect(spans.trim().split('\n')).toHaveLength(90);
    expect(s.requests_joined).toBe(90);
    const clock = s.clocks.vllm;
    console.log(`server 250 ms ahead: ${JSON.stringify(clock)}`);
    expect(clock).toMatchObject({ kind: 'fitted', requests: 90 });
    // Both clocks are the machine's, each anchored to it within microseconds: the true offset is 250 ms.
    expect(Math.abs(clock.offset_ns - 250e6)).toBeLessThanOrEqual(clock.offset_uncertainty_ns + 0.1e6);
    expect(clock.offset_uncertainty_ns).toBeLessThan(5e6);
    for (const row of rows) {
      expect(['trace_id', 'request_id']).toContain(row.span_joined_by);
      // The parts add up to the TTFT the client measured, to the µs each is rounded to.
      expect(Math.abs(sum(row) - ttftMs(row))).toBeLessThan(0.01);
      expect(row.prefill_ms).toBeGreaterThanOrEqual(39);
      // The network legs cannot be negative beyond the offset's uncertainty (an event-loop stall in
      // this process can make one long: the median below is the loopback's).
      for (const leg of [row.to_server_ms, row.from_server_ms]) expect(leg).toBeGreaterThan(-row.span_offset_uncertainty_ns / 1e6 - 0.01);
      expect(row.unaccounted_ms).toBeLessThan(5);
    }
    // 30 requests/s into one slot of 40 ms each: the queue grows, and the slow requests' TTFT is mostly queue.
    const all = s.classes.rt.windows.all;
    expect(all.joined).toBe(90);
    expect(all.network_p50_ms).toBeLessThan(10);
    expect(all.ttft_p95.parts.queue_ms).toBeGreaterThan(all.ttft_p95.parts.prefill_ms);
    expect(all.where_ttft_went).toMatch(/^p95 TTFT .+: .+ of it queued$/);
    // The report says it beside the SLO verdict, and draws where each class's TTFT went.
    expect(report).toContain(`— ${all.where_ttft_went}</p>`);
    expect(report).toContain('data-chart="ttft-parts"');
    expect(report).toMatch(/vllm: its clock reads 250\.\d ms ± /);
    expect(r.field_definitions['requests.ndjson queue_ms']).toMatch(/time_in_queue/);
  });

  it('joins a prefill and a decode instance, each on its own clock, into one timeline with the handoff stated (OTLP/gRPC)', {
    timeout: 90_000,
  }, async () => {
    const { run: r, rows } = await runTraced((_http, grpc) =>
      startTracedTarget({
        endpoint: `http://127.0.0.1:${grpc}`,
        protocol: 'grpc',
        prefillMs: 30,
        itlMs: 5,
        tokens: 6,
        offsetMs: 0,
        disaggregated: { prefillOffsetMs: -120, decodeOffsetMs: 40, kvMs: 15 },
      }),
    );
    const s = r.server_spans;
    expect(rows).toHaveLength(90);
    expect(s.receiver).toMatchObject({ spans: 180, by_trace_id: 180, foreign: 0 });
    expect(s.requests_joined).toBe(90);
    for (const [service, offsetMs] of [
      ['vllm-prefill', -120],
      ['vllm-decode', 40],
    ] as const) {
      const c = s.clocks[service];
      expect(c, service).toMatchObject({ kind: 'fitted', requests: 90 });
      expect(Math.abs(c.offset_ns - offsetMs * 1e6), service).toBeLessThanOrEqual(c.offset_uncertainty_ns + 0.1e6);
    }
    console.log(`disaggregated: ${JSON.stringify(s.clocks)}`);
    const u = (s.clocks['vllm-prefill'].offset_uncertainty_ns + s.clocks['vllm-decode'].offset_uncertainty_ns) / 1e6;
    for (const row of rows) {
      expect(row.span_services).toBe('vllm-prefill,vllm-decode');
      expect(Math.abs(sum(row) - ttftMs(row))).toBeLessThan(0.01);
      // The KV transfer the decode instance reports (a 15 ms timer, which may fire within 1 ms early
      // by the high-resolution clock), and the handoff around it on the two fitted clocks.
      expect(row.kv_transfer_ms).toBeGreaterThanOrEqual(14);
      expect(row.handoff_ms).toBeGreaterThanOrEqual(row.kv_transfer_ms - u);
      expect(row.handoff_ms).toBeLessThan(row.kv_transfer_ms + 10 + u);
    }
    // Each instance's clock is tightly bounded from one side only (the prefill span starts soon after
    // the send, the decode span ends just before the last byte), so the handoff carries the sum of
    // both uncertainties, which the run states; the transfer the server reports is on one clock.
    const all = s.classes.rt.windows.all;
    expect(Math.abs(all.handoff_p50_ms - all.kv_transfer_p50_ms)).toBeLessThan(u + 10);
    expect(all.kv_transfer_p50_ms).toBeGreaterThanOrEqual(14);
  });
});
