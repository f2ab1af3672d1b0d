// A chaos soak, short in CI: three agents, each behind a proxy that injects faults at seeded
// random moments of the run — the link closed at once, or blackholed towards the coordinator or
// towards the agent without closing (test/hosts/blackhole-proxy.ts chaos mode). Every planned
// request must be accounted for exactly once, every agent hand over its `final`, the run complete
// naming each outage. LOADFLEET_SOAK_S (default 20) and LOADFLEET_SOAK_FAULTS (per agent,
// default 2) make it a longer soak; LOADFLEET_SOAK_SEED replays one.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { constantRatePlan, freePort, readRequests, readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';

const TOKEN = { LOADFLEET_TOKEN: 'chaos-token' };
const DURATION_S = Number(process.env.LOADFLEET_SOAK_S ?? 20);
const FAULTS = Number(process.env.LOADFLEET_SOAK_FAULTS ?? 2);
const SEED = Number(process.env.LOADFLEET_SOAK_SEED ?? 23);
const RATE = 10;

describe('chaos soak', () => {
  it(
    `${DURATION_S} s, 3 agents, ${FAULTS} seeded faults each: every request once, final from every agent`,
    async () => {
      const dir = tempDir();
      const plan = writePlan(dir, constantRatePlan('chaos', DURATION_S, RATE));
      const coord = startNode(
        'coordinator/main.js',
        ['start', '--agents', '3', '--plan', plan, '--out', join(dir, 'out'), '--listen', '127.0.0.1:0', '--agent-grace-s', '20'],
        TOKEN,
      );
      const [, url] = await waitFor(coord.child.stderr!, /waiting for \d+ agent\(s\) at (ws:\/\/[\d.:]+)/);
      const upstream = new URL(url!);
      const ids = ['c1', 'c2', 'c3'];
      const proxies = await Promise.all(
        ids.map(async (_, i) => {
          const port = await freePort();
          // Faults from 8 s after the agent connects (the run has started) to 2 s after its planned end.
          const chaos = `chaos:${SEED + i}:${FAULTS}:8000:${(DURATION_S + 6) * 1000}`;
          const p = startNode('test/hosts/blackhole-proxy.js', [String(port), upstream.hostname, upstream.port, 'up', chaos]);
          await waitFor(p.child.stdout!, /proxy listening/);
          return { p, port };
        }),
      );
      const faults: string[] = [];
      for (const [i, { p }] of proxies.entries())
        p.child.stdout!.on('data', (c: Buffer) => {
          for (const l of c.toString().split('\n')) if (l.startsWith('chaos')) faults.push(`${ids[i]}: ${l}`);
        });
      const agents = ids.map((id, i) =>
        startNode(
          'agent/main.js',
          ['--coordinator', `ws://127.0.0.1:${proxies[i]!.port}`, '--id', id, '--spool-dir', join(dir, `spool-${id}`)],
          TOKEN,
        ),
      );
      const [res, ...done] = await Promise.all([coord.done, ...agents.map((a) => a.done)]);
      for (const { p } of proxies) p.child.kill('SIGKILL');
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
    },
    (DURATION_S + 120) * 1000,
  );
});
