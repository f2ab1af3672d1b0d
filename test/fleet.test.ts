// suite: timing
// One fleet, many runs, end to end: separately started agents serve every stage of a sweep
// (`--listen`), an agent killed between stages rejoins under its id (or the fleet goes on without it
// within --max-agent-loss), and an agent whose link is cut mid-run reconnects and resumes the same
// run with every request exactly once. Real coordinator, agent, engine-sim and TCP-proxy processes
// on loopback. The stages' verdicts and the outage's length are timed, so this file runs alone; the
// fleet's untimed runs are in fleet-runs.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPUTED_CAPACITY, SIM_ARGS, writeSweep } from './fixture-plans.js';
import { agent, listening, onlyDir, readJson } from './fleet-kit.js';
import { constantRatePlan, freePort, readRequests, readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';

describe('one fleet, many runs', () => {
  it('a bisect sweep over 3 remote agents (one +250 ms in its own clock domain) finds the capacity; a killed agent rejoins', async () => {
    const dir = tempDir();
    const file = writeSweep(dir, { strategy: { type: 'bisect', pass: 3, fail: 6, resolution: 0.5 } });
    const { coord, url } = await listening(['sweep', file, '--agents', '3', '--out', join(dir, 'out'), ...SIM_ARGS]);
    const spool = (id: string) => join(dir, `spool-${id}`);
    const a1 = agent(url, 'a1', spool('a1'));
    const a2 = agent(url, 'a2', spool('a2'));
    const skewed = agent(url, 'skewed', spool('skewed'), ['--clock-domain', 'lab:other', '--test-clock-offset-ms=250']);
    // After the first stage, a2 dies without a word and comes back under its id.
    await waitFor(coord.child.stderr!, /\[sweep\] stage 1: .* → /, 120_000);
    a2.child.kill('SIGKILL');
    expect((await a2.done).code).toBeNull();
    const a2again = agent(url, 'a2', spool('a2'));
    const [res, ...agents] = await Promise.all([coord.done, a1.done, a2again.done, skewed.done]);
    expect(res.code, res.stderr).toBe(0);
    // Released at the end, every agent exits 0.
    for (const a of agents) expect(a.code, a.stderr).toBe(0);
    const s = readJson(join(onlyDir(join(dir, 'out')), 'sweep.json'));
    // On failure, say which stage was limited by what (agents and reasons), not only that it was.
    const why = JSON.stringify(s.stages.map((x: any) => [x.value, x.verdict, x.client_limited_agents, x.run_status_reason]));
    expect(s.stop_rule, `${s.stop_reason}; stages: ${why}`).toBe('done');
    expect(s.stages.length).toBeGreaterThanOrEqual(3);
    expect(Math.abs(s.capacity - COMPUTED_CAPACITY) / COMPUTED_CAPACITY, `capacity ${s.capacity} vs ${COMPUTED_CAPACITY}`).toBeLessThan(
      0.15,
    );
    expect(s.bracket[0]).toBeLessThanOrEqual(COMPUTED_CAPACITY);
    expect(s.bracket[1]).toBeGreaterThanOrEqual(COMPUTED_CAPACITY);
    for (const st of s.stages) {
      // A stage the client limited (a loaded machine) was measured again until one decided.
      if (st.verdict === 'client_limited')
        expect(
          s.stages.some((x: any) => x.value === st.value && (x.verdict === 'pass' || x.verdict === 'fail')),
          why,
        ).toBe(true);
      expect(st.agent_health.map((a: any) => a.agent_id).sort()).toEqual(['a1', 'a2', 'skewed']);
      // Offsets are measured again for every stage: the skewed agent's +250 ms each time.
      const run = readRunJson(st.run_dir);
      expect(run.clock.alignment).toBe('measured-offsets');
      const off = run.agents.find((a: any) => a.agent_id === 'skewed');
      expect(Math.abs(off.offset_ns / 1e6 - 250)).toBeLessThan(5);
      expect(run.agents.every((a: any) => a.rtt_ns > 0)).toBe(true);
    }
    // a2 joined twice: at the start and after its restart.
    expect(res.stderr.match(/agent a2 joined/g)).toHaveLength(2);
  });

  it('with --max-agent-loss 1 a sweep goes on without an agent killed between stages, and says so', async () => {
    const dir = tempDir();
    const file = writeSweep(dir, { strategy: { type: 'stages', values: [1, 2, 3] } });
    const { coord, url } = await listening([
      'sweep',
      file,
      '--agents',
      '3',
      '--max-agent-loss',
      '1',
      '--agent-grace-s',
      '3',
      '--out',
      join(dir, 'out'),
      ...SIM_ARGS,
    ]);
    const agents = ['b1', 'b2', 'b3'].map((id) => agent(url, id, join(dir, `spool-${id}`)));
    await waitFor(coord.child.stderr!, /\[sweep\] stage 1: .* → /, 120_000);
    agents[2]!.child.kill('SIGKILL');
    const res = await coord.done;
    expect(res.code, res.stderr).toBe(0);
    const s = readJson(join(onlyDir(join(dir, 'out')), 'sweep.json'));
    expect(s.stages.map((st: any) => st.agents)).toEqual([3, 2, 2]);
    expect(s.stages[1].agent_health.map((a: any) => a.agent_id).sort()).toEqual(['b1', 'b2']);
    // The same global schedule split over the new N: what the 2 agents dispatched hashes to it.
    for (const st of s.stages) {
      const run = readRunJson(st.run_dir);
      expect(run.offered_schedule_matches, st.run_dir).toBe(true);
      expect(run.agents.reduce((n: number, a: any) => n + a.requests, 0)).toBe(run.requests);
    }
    expect(res.stderr).toMatch(/running on 2 of 3 agents \(within --max-agent-loss 1\)/);
    for (const a of agents.slice(0, 2)) expect((await a.done).code).toBe(0);
  });

  it('a link cut mid-run: the agent reconnects and resumes; every request once, one row per second', async () => {
    const dir = tempDir();
    const plan = writePlan(dir, constantRatePlan('cut', 8, 20));
    const { coord, url } = await listening(['start', '--agents', '2', '--plan', plan, '--out', join(dir, 'out'), '--sim-arg=--ttft-ms=20']);
    // One agent reaches the coordinator straight, the other through a proxy we can cut.
    const port = await freePort();
    const upstream = new URL(url);
    const proxyArgs = [String(port), upstream.hostname, upstream.port, '0', '0'];
    let proxy = startNode('test/hosts/tcp-delay-proxy.js', proxyArgs);
    await waitFor(proxy.child.stdout!, /proxy listening/);
    const direct = agent(url, 'direct', join(dir, 'spool-direct'));
    const cut = agent(`ws://127.0.0.1:${port}`, 'cut', join(dir, 'spool-cut'));
    await waitFor(coord.child.stderr!, /t=3s/, 60_000);
    proxy.child.kill('SIGKILL');
    await proxy.done;
    await new Promise((r) => setTimeout(r, 2000));
    proxy = startNode('test/hosts/tcp-delay-proxy.js', proxyArgs);
    await waitFor(proxy.child.stdout!, /proxy listening/);
    const [res, d, c] = await Promise.all([coord.done, direct.done, cut.done]);
    proxy.child.kill('SIGKILL');
    expect(res.code, res.stderr).toBe(0);
    expect(d.code, d.stderr).toBe(0);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toMatch(/resumed run/);
    const runDir = onlyDir(join(dir, 'out'));
    const run = readRunJson(runDir);
    const rows = readRequests(runDir);
    // Every scheduled request exactly once, every one of them ok.
    expect(rows).toHaveLength(160);
    expect(new Set(rows.map((r) => r.request_index)).size).toBe(160);
    expect(rows.every((r) => r.status === 'ok')).toBe(true);
    expect(run.requests).toBe(160);
    const cutAgent = run.agents.find((a: any) => a.agent_id === 'cut');
    expect(cutAgent.status).toBe('ok');
    expect(cutAgent.outages).toHaveLength(1);
    expect(cutAgent.outages[0].resumed).toBe(true);
    const outageS = cutAgent.outages[0].to_s - cutAgent.outages[0].from_s;
    expect(outageS).toBeGreaterThan(1.5);
    expect(outageS).toBeLessThan(15);
    expect(run.status).toBe('degraded');
    expect(run.status_reason).toMatch(/agent cut was cut off for [\d.]+ s from t=[\d.]+ s .*reconnected and resumed/);
    // One row per second and class in traffic.csv; the interval log has no second twice either.
    const traffic = readFileSync(join(runDir, 'traffic.csv'), 'utf8').trim().split('\n').slice(1);
    const seconds = traffic.map((l) => l.split(',').slice(0, 2).join(','));
    expect(new Set(seconds).size).toBe(seconds.length);
    expect(run.intervals.late).toBe(0);
    const issued = traffic.reduce((n, l) => n + Number(l.split(',')[4]), 0);
    expect(issued).toBe(160);
  });
});
