// suite: timing
// Several hosts on one machine (network namespaces): a coordinator, three agents and a target,
// with wall-clock skews injected by faketime, an asymmetric path through a delaying TCP proxy,
// and a monotonic-clock offset from a time namespace. Skips, saying why, where namespaces or
// faketime are not available.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nearestRank } from '../shared/histogram.js';
import type { Plan } from '../shared/plan.js';
import { onlyRunDir, readRequests, readRunJson, startNode, tempDir, writePlan } from './harness.js';
import type { Host } from './hosts/netns.js';
import { buildHosts, netnsUnavailable } from './hosts/netns.js';
import { skipFor } from './require.js';

function faketimeUnavailable(): string | null {
  try {
    execFileSync('faketime', ['-f', '+0s', 'true']);
    return null;
  } catch {
    return 'faketime is not installed (apt-get install faketime)';
  }
}

const SKIP = skipFor('the multi-host tests', netnsUnavailable() ?? faketimeUnavailable());

const TOKEN = 'multihost-token';
const SKEW_MS: Record<string, number> = { a1: 250, a2: -120, a3: 0 };

interface Fleet {
  run: any;
  rows: any[];
  code: number | null;
}

describe.skipIf(SKIP)('multi-host: clocks across network namespaces', () => {
  let hosts: Record<string, Host>;
  let destroy = (): void => {};
  let stopTarget = (): void => {};

  beforeAll(async () => {
    ({ hosts, destroy } = buildHosts(['c', 'a1', 'a2', 'a3', 't'], 7));
    const sim = startNode('sim/main.js', ['--host', '0.0.0.0', '--port', '8000', '--ttft-ms', '10', '--itl-ms', '4'], {}, [
      'ip',
      'netns',
      'exec',
      hosts.t!.ns,
    ]);
    stopTarget = () => sim.child.kill('SIGTERM');
    await new Promise<void>((resolve) => sim.child.stdout!.once('data', () => resolve()));
  });

  afterAll(() => {
    stopTarget();
    destroy();
  });

  const plan = (): Plan => ({
    schema: 'loadfleet.plan/v1',
    name: 'multihost',
    seed: 21,
    duration_s: 5,
    drain_timeout_s: 5,
    target: { base_url: `http://${hosts.t!.ip}:8000/v1`, api: 'chat', model: 'loadfleet-sim', timeout_s: 10 },
    classes: [
      {
        name: 'rt',
        prompt: { input_tokens: 32, output_tokens: 8 },
        load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 5, rate_per_s: 30 }] },
      },
    ],
  });

  // a1 and a2 run under faketime; a3 reaches the coordinator through a proxy that delays its
  // upstream by 6 ms and its downstream by 1 ms, inside a time namespace with monotonic +1000 s.
  async function runFleet(domain: (id: string) => string): Promise<Fleet> {
    const work = tempDir();
    const c = hosts.c!;
    const coord = startNode(
      'coordinator/main.js',
      ['start', '--agents', '3', '--listen', '0.0.0.0:7000', '--plan', writePlan(work, plan()), '--out', join(work, 'out'), '--quiet'],
      { LOADFLEET_TOKEN: TOKEN },
      ['ip', 'netns', 'exec', c.ns],
    );
    await new Promise((r) => setTimeout(r, 500));
    const proxy = startNode('test/hosts/tcp-delay-proxy.js', ['7001', c.ip, '7000', '6', '1'], {}, ['ip', 'netns', 'exec', hosts.a3!.ns]);
    await new Promise<void>((resolve) => proxy.child.stdout!.once('data', () => resolve()));
    const agents = ['a1', 'a2', 'a3'].map((id) => {
      const h = hosts[id]!;
      const url = id === 'a3' ? 'ws://127.0.0.1:7001' : `ws://${c.ip}:7000`;
      const wrap =
        id === 'a3'
          ? ['ip', 'netns', 'exec', h.ns, 'unshare', '--time', '--fork', '--monotonic', '1000']
          : ['ip', 'netns', 'exec', h.ns, 'faketime', '-f', `${SKEW_MS[id]! >= 0 ? '+' : ''}${SKEW_MS[id]! / 1000}s`];
      return startNode(
        'agent/main.js',
        ['--coordinator', url, '--id', id, '--clock-domain', domain(id)],
        { LOADFLEET_TOKEN: TOKEN, FAKETIME_DONT_FAKE_MONOTONIC: '1' },
        wrap,
      );
    });
    const res = await coord.done;
    await Promise.all(agents.map((a) => a.done));
    proxy.child.kill('SIGTERM');
    const dir = onlyRunDir(join(work, 'out'));
    return { run: readRunJson(dir), rows: readRequests(dir), code: res.code };
  }

  it('measures every skew within its stated uncertainty and aligns the timeline', async () => {
    const { run, rows, code } = await runFleet((id) => `host-${id}`);
    expect(code).toBe(0);
    expect(run.clock.alignment).toBe('measured-offsets');
    const report: Record<string, unknown> = {};
    for (const a of run.agents) {
      const injectedNs = SKEW_MS[a.agent_id]! * 1e6;
      // The probe bound, plus both clocks' stated anchor bounds (the injected skew is between wall
      // clocks, the measured offset between anchored clocks), plus 0.2 ms for faketime's reading.
      const anchors = a.clock_anchor_uncertainty_ns + run.clock.coordinator_anchor_uncertainty_ns;
      expect(Math.abs(a.offset_ns - injectedNs)).toBeLessThanOrEqual(a.offset_uncertainty_ns + anchors + 200_000);
      const mine = rows.filter((r) => r.agent_id === a.agent_id);
      const aligned = mine.map((r) => Number(r.sent_unix_ns - r.intended_unix_ns)).sort((x, y) => x - y);
      const raw = mine.map((r) => Number((r.sent_local_ns ?? r.sent_unix_ns) - r.intended_unix_ns)).sort((x, y) => x - y);
      report[a.agent_id] = {
        injected_ms: SKEW_MS[a.agent_id],
        offset_ms: a.offset_ns / 1e6,
        uncertainty_ms: a.offset_uncertainty_ns / 1e6,
        rtt_ms: a.rtt_ns / 1e6,
        aligned_lag_p99_ms: nearestRank(aligned, 0.99) / 1e6,
        unaligned_lag_p50_ms: nearestRank(raw, 0.5) / 1e6,
        anchor_uncertainty_ms: a.clock_anchor_uncertainty_ns / 1e6,
        aligned_lag_p50_ms: nearestRank(aligned, 0.5) / 1e6,
      };
    }
    console.log(`multi-host clock figures: ${JSON.stringify({ ...report, start_skew_ms: run.clock.start_skew_ns / 1e6 })}`);
    // Aligned, every agent's typical lag is small (a3's 2.5 ms path bias is inside its bound); the
    // tail is shared-core scheduling on this machine (all three agents stall together when the
    // six processes contend for two cores), held to the client-health limit, not to the median.
    for (const a of run.agents) {
      const r = report[a.agent_id] as { aligned_lag_p50_ms: number; aligned_lag_p99_ms: number };
      expect(Math.abs(r.aligned_lag_p50_ms)).toBeLessThan(a.offset_uncertainty_ns / 1e6 + 2);
      expect(r.aligned_lag_p99_ms).toBeLessThan(50);
    }
    expect((report.a1 as { unaligned_lag_p50_ms: number }).unaligned_lag_p50_ms).toBeGreaterThan(240);
    // Measured, not assumed: six processes on two cores can start 10+ ms apart here, and then the
    // run must say so (degraded, with the skew) rather than pass it off as a clean start.
    expect(run.clock.start_skew_ns).toBeGreaterThan(0);
    expect(run.clock.start_skew_ns).toBeLessThan(50e6);
    if (run.clock.start_skew_ns > 5e6) expect(run.status_reason).toMatch(/start skew \d+\.\d{3} ms > --max-start-skew-ms 5/);
    expect(run.agents.find((a: any) => a.agent_id === 'a3').offset_uncertainty_ns).toBeGreaterThanOrEqual(3e6);
  });

  it('catches skewed agents that declare one common domain, before any load', async () => {
    const { run, rows, code } = await runFleet(() => 'chrony:lab');
    expect(code).toBe(3);
    expect(run.status_reason).toMatch(/declare clock domain chrony:lab, but .*a1 is 2\d\d\.\d+ ms/);
    expect(run.status_reason).toMatch(/a2 is -1\d\d\.\d+ ms/);
    expect(rows).toHaveLength(0);
  });
});
