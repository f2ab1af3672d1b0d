// suite: timing
// A chaos soak, short in CI: three agents, each behind a proxy that injects faults at seeded
// random moments of the run — the link closed at once, or blackholed towards the coordinator or
// towards the agent without closing (test/hosts/blackhole-proxy.ts chaos mode). Every planned
// request must be accounted for exactly once, every agent hand over its `final`, the run complete
// naming each outage. One agent's clock runs 500 ppm fast (faketime, in a network namespace of its
// own, beside a namespace holding the rest): the coordinator must keep it on its timeline through
// the faults (clock_residual passes; its real sends, stamped by a proxy in front of the target,
// sit where the steady agents' do). The coordinator's memory after a full GC is sampled every
// 1.37 s and may grow by at most 1.25 KiB per request taken in (see MEMORY_BYTES_PER_REQUEST).
//
// LOADFLEET_SOAK_S (default 30: the drifting agent is judged by held-out probes from its first
// request, through its faults), LOADFLEET_SOAK_FAULTS (per agent, default 2) and
// LOADFLEET_SOAK_RATE (req/s, default 10) make it a longer soak; LOADFLEET_SOAK_SEED replays one.
// Without root, ip netns or faketime the soak runs on loopback without the drifting agent, saying
// so (and fails instead under LOADFLEET_REQUIRE_ALL=1, as CI runs it).

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nearestRank } from '../shared/histogram.js';
import type { Plan } from '../shared/plan.js';
import { constantRatePlan, distPath, freePort, readRequests, readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';
import { FAST_CLOCK, faketimeUnavailable } from './hosts/faketime.js';
import { judgeMemorySlope, readHeapLog } from './hosts/memory-slope.js';
import { buildHosts, type Host, netnsUnavailable } from './hosts/netns.js';
import { rssTrend, sampleRss } from './hosts/rss.js';
import { collectStamps } from './hosts/stamps.js';
import { skipFor } from './require.js';

const TOKEN = { LOADFLEET_TOKEN: 'chaos-token' };
const DURATION_S = Number(process.env.LOADFLEET_SOAK_S ?? 30);
const FAULTS = Number(process.env.LOADFLEET_SOAK_FAULTS ?? 2);
const SEED = Number(process.env.LOADFLEET_SOAK_SEED ?? 23);
const RATE = Number(process.env.LOADFLEET_SOAK_RATE ?? 10);
const DRIFT = !skipFor("the chaos soak's drifting agent", netnsUnavailable() ?? faketimeUnavailable());
/**
 * Memory: the bytes the coordinator retains per request, judged in every soak, CI's 30 s one
 * included. It is the Theil–Sen slope of its JS heap after a full GC (sampled every 1.37 s) over
 * the requests taken in, from MEMORY_WARMUP_S into the load to its end, and may be at most
 * MEMORY_BYTES_PER_REQUEST. Measured 2026-12-04 on CI's soak (10 req/s, 3 agents, faults): 0.68 to
 * 0.87 KiB per request in five runs with the first 10 s left out (up to 1.2 KiB from 5 s: warm-up).
 * At 10 req/s that is 7–9 KiB a second, more than the ~70 bytes a request the exact figures keep, so it
 * is mostly per-second state (a heap snapshot at 60 req/s found +0.39 MiB over 70 s). 1.25 KiB sits
 * above what was measured, and a leak of 1 KiB per request on top of it exceeds it (the test checks
 * that on each run's own samples, memory-slope.test.ts on recorded and synthetic ones). External
 * memory and RSS are printed for the record: a faulted link holds its frames in Buffers (8–27 MiB
 * swings), and RSS warms up for minutes (second halves fitted −9.3 to +3.0 MiB in 30 s runs).
 */
const MEMORY_BYTES_PER_REQUEST = 1280;
const MEMORY_WARMUP_S = 10;

describe('chaos soak', () => {
  let hosts: Record<string, Host> | null = null;
  let destroy = (): void => {};
  afterAll(() => destroy());

  it(
    `${DURATION_S} s at ${RATE} req/s, 3 agents${DRIFT ? ' (one clock 500 ppm fast)' : ''}, ${FAULTS} seeded faults each: every request once, final from every agent, memory flat`,
    async () => {
      if (DRIFT) ({ hosts, destroy } = buildHosts(['c', 'fast'], 23));
      const inC = hosts ? ['ip', 'netns', 'exec', hosts.c!.ns] : [];
      const dir = tempDir();
      const plan: Plan = constantRatePlan('chaos', DURATION_S, RATE);
      // engine-sim as the target. With the drifting agent, one both namespaces reach, behind a proxy
      // that stamps each request's arrival on the true clock (the engine listens on the coordinator's
      // loopback).
      let stamps = new Map<number, bigint>();
      const targets: ReturnType<typeof startNode>[] = [];
      if (hosts) {
        const sim = startNode('sim/main.js', ['--host', '127.0.0.1', '--port', '8000', '--ttft-ms', '10', '--itl-ms', '4'], {}, inC);
        await waitFor(sim.child.stdout!, /./);
        const stamp = startNode('test/hosts/stamp-proxy.js', ['8001', '127.0.0.1', '8000'], {}, inC);
        await waitFor(stamp.child.stdout!, /proxy listening/);
        stamps = collectStamps(stamp.child.stdout!);
        targets.push(sim, stamp);
        plan.target = { base_url: `http://${hosts.c!.ip}:8001/v1`, api: 'chat', model: 'loadfleet-sim', timeout_s: 10 };
      } else {
        // The same target on loopback. A plan with a target of its own and no scrape list is not
        // scraped: the scraper's growth with run time (docs/reliability.md, found, not fixed) would
        // otherwise be what this memory check measures (+4.4 MiB over a 15 s half, tried).
        const port = await freePort();
        const sim = startNode('sim/main.js', ['--host', '127.0.0.1', '--port', String(port), '--ttft-ms', '10', '--itl-ms', '4']);
        await waitFor(sim.child.stdout!, /./);
        targets.push(sim);
        plan.target = { base_url: `http://127.0.0.1:${port}/v1`, api: 'chat', model: 'loadfleet-sim', timeout_s: 10 };
      }
      // The coordinator retains what a full GC leaves, sampled every 1.37 s (test/hosts/heap-sampler.ts):
      // not in step with its one clock probe a second, so a probe a collection delays is one the
      // lowest-delay fit drops, not every probe alike. (On a machine at load average 14–20, runs with
      // and without the sampler alike put c3's sends 4–5 ms off the steady agents': the load's doing.)
      const heapLog = join(dir, 'heap.log');
      const heapEnv = {
        NODE_OPTIONS: [process.env.NODE_OPTIONS, `--require ${distPath('test/hosts/heap-sampler.js')}`].filter(Boolean).join(' '),
        LOADFLEET_TEST_HEAP_LOG: heapLog,
        LOADFLEET_TEST_HEAP_EVERY_MS: '1370',
      };
      const coord = startNode(
        'coordinator/main.js',
        [
          'start',
          '--agents',
          '3',
          '--plan',
          writePlan(dir, plan),
          '--out',
          join(dir, 'out'),
          '--listen',
          hosts ? '127.0.0.1:7000' : '127.0.0.1:0',
          '--agent-grace-s',
          '20',
        ],
        { ...TOKEN, ...heapEnv },
        inC,
      );
      // `ip netns exec` execs node in place: the child's pid is the coordinator's.
      const rss = sampleRss(coord.child.pid!);
      const [, url] = await waitFor(coord.child.stderr!, /waiting for \d+ agent\(s\) at (ws:\/\/[\d.:]+)/);
      const upstream = new URL(url!);
      const ids = ['c1', 'c2', 'c3'];
      // c3 is the drifting agent: in its own namespace, it reaches its proxy on the coordinator's.
      const proxies = await Promise.all(
        ids.map(async (_, i) => {
          const port = hosts ? 7101 + i : await freePort();
          // Faults from 20 s after the agent connects (the run has started: the drifting agent's
          // drift is fitted before it, 4–14 s of probes) to about 2 s after its planned end.
          const chaos = `chaos:${SEED + i}:${FAULTS}:20000:${(DURATION_S + 18) * 1000}`;
          const listen = hosts ? `0.0.0.0:${port}` : String(port);
          const p = startNode('test/hosts/blackhole-proxy.js', [listen, upstream.hostname, upstream.port, 'up', chaos], {}, inC);
          await waitFor(p.child.stdout!, /proxy listening/);
          return { p, port };
        }),
      );
      const faults: string[] = [];
      for (const [i, { p }] of proxies.entries())
        p.child.stdout!.on('data', (c: Buffer) => {
          for (const l of c.toString().split('\n')) if (l.startsWith('chaos')) faults.push(`${ids[i]}: ${l}`);
        });
      let armedAtMs = 0;
      let armedAtUnixMs = 0;
      void waitFor(coord.child.stderr!, /agents armed; start in ([\d.]+) (ms|s)\b/, 120_000).then(
        (m) => {
          const inMs = Number(m[1]) * (m[2] === 's' ? 1000 : 1);
          armedAtMs = rss.nowMs() + inMs;
          armedAtUnixMs = Date.now() + inMs;
        },
        () => {},
      );
      const agents = ids.map((id, i) => {
        const fast = hosts && id === 'c3';
        const via = fast ? `ws://${hosts!.c!.ip}:${proxies[i]!.port}` : `ws://127.0.0.1:${proxies[i]!.port}`;
        return startNode(
          'agent/main.js',
          ['--coordinator', via, '--id', id, '--spool-dir', join(dir, `spool-${id}`), ...(fast ? ['--clock-domain', 'lab:fast'] : [])],
          TOKEN,
          fast ? ['ip', 'netns', 'exec', hosts!.fast!.ns, 'faketime', '-f', FAST_CLOCK] : inC,
        );
      });
      const [res, ...done] = await Promise.all([coord.done, ...agents.map((a) => a.done)]);
      rss.stop();
      for (const { p } of proxies) p.child.kill('SIGKILL');
      for (const t of targets) t.child.kill('SIGTERM');
      console.log(`chaos faults: ${JSON.stringify(faults)}`);
      expect(res.code, res.stderr).toBe(0);
      for (const d of done) expect(d.code, d.stderr).toBe(0);
      const [runId] = readdirSync(join(dir, 'out'));
      const runDir = join(dir, 'out', runId!);
      const run = readRunJson(runDir);
      const rows = readRequests(runDir);
      expect(faults.length).toBe(3 * FAULTS);
      // Every planned request exactly once, and from every agent its final.
      expect(rows).toHaveLength(DURATION_S * RATE);
      expect(new Set(rows.map((r) => r.request_index)).size).toBe(DURATION_S * RATE);
      expect(run.requests).toBe(DURATION_S * RATE);
      for (const a of run.agents) expect(a.status, a.agent_id).toBe('ok');
      const outages = run.agents.flatMap((a: any) => a.outages.map((o: any) => ({ id: a.agent_id, ...o })));
      console.log(`chaos outages: ${JSON.stringify(outages)} status ${run.status}: ${run.status_reason}`);
      expect(outages.every((o: any) => o.resumed)).toBe(true);
      if (outages.length > 0) {
        expect(run.status).toBe('degraded');
        for (const o of outages) expect(run.status_reason).toContain(`agent ${o.id} was cut off`);
      }
      for (const id of ids) expect(readdirSync(join(dir, `spool-${id}`)).filter((n) => n.includes('.spool.'))).toEqual([]);

      // Resident memory over the second half of the load, for the record (armedAtMs: the start instant on the sampler's clock).
      expect(armedAtMs).toBeGreaterThan(0);
      const half = rssTrend(rss.samples, armedAtMs + (DURATION_S / 2) * 1000, armedAtMs + DURATION_S * 1000);
      const kib = rss.samples.map((s) => s.kib);
      const memory = {
        samples: rss.samples.length,
        start_mib: kib[0]! / 1024,
        max_mib: Math.max(...kib) / 1024,
        at_start_instant_mib: rss.samples.find((s) => s.ms >= armedAtMs)!.kib / 1024,
        second_half_samples: half.samples,
        second_half_kib_per_s: half.kibPerS,
        second_half_growth_kib: half.growthKib,
        // The series itself, every 10 s from the start instant (MiB), for the record.
        every_10s_mib: rss.samples
          .filter((x) => x.ms >= armedAtMs && Math.round((x.ms - armedAtMs) / 1000) % 10 === 0)
          .map((x) => Math.round(x.kib / 102.4) / 10),
      };
      console.log(`chaos coordinator memory: ${JSON.stringify(memory)}`);
      expect(half.samples).toBeGreaterThanOrEqual(Math.floor(DURATION_S / 2) - 2);
      // What the coordinator retains per request: the slope of its JS heap after a full GC over the
      // requests it had taken in (those done by each sample), over the load past its warm-up.
      const doneMs = rows.map((r) => Number((r.done_unix_ns ?? r.sent_unix_ns) / 1_000_000n)).sort((a, b) => a - b);
      const takenBy = (ms: number): number => doneMs.filter((d) => d <= ms).length;
      const heap = readHeapLog(heapLog).filter(
        (h) => h.ms >= armedAtUnixMs + MEMORY_WARMUP_S * 1000 && h.ms <= armedAtUnixMs + DURATION_S * 1000,
      );
      const slope = judgeMemorySlope(
        heap.map((h) => ({ requests: takenBy(h.ms), bytes: h.heapUsed })),
        MEMORY_BYTES_PER_REQUEST,
      );
      console.log(
        `chaos coordinator retained: ${JSON.stringify({
          ...slope,
          heap_mib: [heap[0]?.heapUsed, heap.at(-1)?.heapUsed].map((b) => b && Math.round((b / 2 ** 20) * 100) / 100),
          external_mib: heap.map((h) => Math.round((h.external / 2 ** 20) * 10) / 10),
        })}`,
      );
      expect(slope.points).toBeGreaterThanOrEqual(Math.floor((DURATION_S - MEMORY_WARMUP_S) / 1.37) - 3);
      expect(slope.pass, `retained ${slope.bytesPerRequest} B per request > ${MEMORY_BYTES_PER_REQUEST}`).toBe(true);
      // The bound must still catch a 1 KiB-per-request leak on this run: the headroom between the
      // slope measured and the bound, plus the slope's resolution, is less than 1 KiB. (Should the
      // coordinator come to retain much less, this says to tighten the bound.)
      expect(
        slope.bytesPerRequest + 1024 - slope.resolution,
        `a 1 KiB-per-request leak would not exceed the bound here: tighten MEMORY_BYTES_PER_REQUEST`,
      ).toBeGreaterThan(MEMORY_BYTES_PER_REQUEST);

      if (!hosts) return;
      // The drifting agent was kept on the coordinator's timeline through the faults.
      const fast = run.agents.find((a: any) => a.agent_id === 'c3');
      expect(fast.drift_ppm).toBeGreaterThan(450);
      expect(fast.drift_ppm).toBeLessThan(550);
      const residual = run.data_quality.checks.find((c: any) => c.name === 'clock_residual');
      console.log(`chaos clock: ${JSON.stringify({ drift_ppm: fast.drift_ppm, residual })}`);
      expect(residual.status).toBe('pass');
      // Its recorded sends against the true clock's stamps, beside the steady agents' (the control:
      // the observer's own delay is in both): within the tolerance over the last half of the run,
      // where an uncorrected 500 ppm clock would be 7–15 ms (at 30 s) off.
      const startNs: bigint = rows.reduce(
        (m: bigint, r: any) => (r.intended_unix_ns < m ? r.intended_unix_ns : m),
        rows[0].intended_unix_ns,
      );
      const recMs = (ids: string[]) => {
        const xs = rows
          .filter(
            (r) => ids.includes(r.agent_id) && stamps.has(r.request_index) && Number(r.intended_unix_ns - startNs) / 1e9 >= DURATION_S / 2,
          )
          .map((r) => Number(r.sent_unix_ns - stamps.get(r.request_index)!) / 1e6)
          .sort((x, y) => x - y);
        return nearestRank(xs, 0.5);
      };
      const aligned = { fast_rec_p50_ms: recMs(['c3']), steady_rec_p50_ms: recMs(['c1', 'c2']) };
      console.log(`chaos aligned sends: ${JSON.stringify(aligned)}`);
      expect(Math.abs(aligned.fast_rec_p50_ms - aligned.steady_rec_p50_ms)).toBeLessThan(2);
    },
    (DURATION_S + 150) * 1000,
  );
});
