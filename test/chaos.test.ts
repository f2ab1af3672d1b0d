// A chaos soak, short in CI: three agents, each behind a proxy that injects faults at seeded
// random moments of the run — the link closed at once, or blackholed towards the coordinator or
// towards the agent without closing (test/hosts/blackhole-proxy.ts chaos mode). Every planned
// request must be accounted for exactly once, every agent hand over its `final`, the run complete
// naming each outage. One agent's clock runs 500 ppm fast (faketime, in a network namespace of its
// own, beside a namespace holding the rest): the coordinator must keep it on its timeline through
// the faults (clock_residual passes; its real sends, stamped by a proxy in front of the target,
// sit where the steady agents' do). The coordinator's resident memory is sampled every second and
// must stay flat over the second half of the load in a soak of 4 minutes or more, and within a
// gross bound in a short run (see MEMORY_FLAT_FLOOR_KIB below).
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
import { constantRatePlan, freePort, readRequests, readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';
import { FAST_CLOCK, faketimeUnavailable } from './hosts/faketime.js';
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
 * Memory flat, judged in a run of 4 minutes or more (a soak): over the second half of the load,
 * the line fitted through the coordinator's VmRSS (one sample a second) may rise by at most
 * MEMORY_FLAT_FLOOR_KIB plus MEMORY_FLAT_BYTES_PER_REQUEST for each request planned in that half.
 * Why these (measured 2026-12-04, docs/reliability.md): what the coordinator retains per request
 * is the exact figures' raw values, ~70 bytes (a heap snapshot diff over 70 s at 60 req/s: +0.39
 * MiB of JS heap for 4,200 requests, nearly all of it the exact store's typed arrays, bounded by
 * its spill cap), so 256 bytes leaves 3.5× margin; and RSS moves in steps the retained heap does
 * not explain (a +3.5 MiB step in a 4-minute soak whose second half then fitted +2.5 MiB; others
 * +1.1, −6.2, −6.2 and, over 15 minutes, +0.9 MiB), so the floor is 4 MiB. A leak of the kind
 * issue 23 found (~1 KB per request) exceeds this once the second half holds more than ~5,500
 * requests: at 30 req/s, a soak of 7 minutes or more.
 * A shorter run (CI's 30 s) is still warming up — RSS settled only ~3 minutes into the 15-minute
 * soak, and 30 s runs' second halves fitted −9.3 to +3.0 MiB — so it is held to a gross bound
 * only (MEMORY_GROSS_KIB): a leak per fault, reconnect or frame, not per request.
 */
const MEMORY_FLAT_FLOOR_KIB = 4096;
const MEMORY_FLAT_BYTES_PER_REQUEST = 256;
const MEMORY_GROSS_KIB = 16_384;
const SOAK_MIN_S = 240;

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
        TOKEN,
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
      void waitFor(coord.child.stderr!, /agents armed; start in ([\d.]+) (ms|s)\b/, 120_000).then(
        (m) => (armedAtMs = rss.nowMs() + Number(m[1]) * (m[2] === 's' ? 1000 : 1)),
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

      // Memory flat over the second half of the load (armedAtMs: the start instant on the sampler's clock).
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
      const boundKib =
        DURATION_S >= SOAK_MIN_S
          ? MEMORY_FLAT_FLOOR_KIB + (MEMORY_FLAT_BYTES_PER_REQUEST * (DURATION_S / 2) * RATE) / 1024
          : MEMORY_GROSS_KIB;
      expect(half.growthKib, `second-half RSS growth over its bound of ${boundKib} KiB`).toBeLessThan(boundKib);

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
