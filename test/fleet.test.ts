// suite: timing
// One fleet, many runs, end to end: separately started agents serve every stage of a sweep and
// every run of an experiment (`--listen`), an agent killed between stages rejoins under its id (or
// the fleet goes on without it within --max-agent-loss), and an agent whose link is cut mid-run
// reconnects and resumes the same run with every request exactly once. Real coordinator, agent,
// engine-sim and TCP-proxy processes on loopback.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPUTED_CAPACITY, EXPERIMENT, EXPERIMENT_PLAN, SIM_ARGS, writeSweep } from './fixture-plans.js';
import { constantRatePlan, freePort, readRequests, readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';

const TOKEN = { LOADFLEET_TOKEN: 'fleet-test-token' };

/** A coordinator command listening on a free loopback port; resolves once it waits for agents. */
async function listening(args: readonly string[]) {
  const coord = startNode('coordinator/main.js', [...args, '--listen', '127.0.0.1:0'], TOKEN);
  const [, url] = await waitFor(coord.child.stderr!, /waiting for \d+ agent\(s\) at (ws:\/\/[\d.:]+)/);
  return { coord, url: url! };
}

function agent(url: string, id: string, spool: string, extra: readonly string[] = []) {
  return startNode('agent/main.js', ['--coordinator', url, '--id', id, '--spool-dir', spool, ...extra], TOKEN);
}

function onlyDir(out: string): string {
  const [dir] = readdirSync(out);
  return join(out, dir!);
}

const readJson = (path: string): any => JSON.parse(readFileSync(path, 'utf8'));

/** Everything a process has printed on stderr so far, from its start. */
function stderrOf(p: { child: { stderr: NodeJS.ReadableStream | null } }): () => string {
  let text = '';
  p.child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  return () => text;
}

/** Resolves once `text()` matches `pattern` (polled), rejects after `timeoutMs`. */
async function until(text: () => string, pattern: RegExp, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(text())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; got:\n${text()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

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

  it('an experiment (2 arms × 2 repeats) runs every run on both remote agents', async () => {
    const dir = tempDir();
    writePlan(dir, EXPERIMENT_PLAN);
    const file = join(dir, 'e.experiment.json');
    writeFileSync(file, JSON.stringify(EXPERIMENT));
    const { coord, url } = await listening(['experiment', file, '--agents', '2', '--out', join(dir, 'out'), '--sim-arg=--ttft-ms=20']);
    const agents = ['host-a', 'host-b'].map((id) => agent(url, id, join(dir, `spool-${id}`)));
    const res = await coord.done;
    expect(res.code, res.stderr).toBe(0);
    for (const a of agents) {
      const done = await a.done;
      expect(done.code).toBe(0);
      // Four runs on one link: each run handled and acknowledged its messages once (no earlier
      // run's handler still listening, so no ack came twice for a sequence number).
      const handed = [...done.stderr.matchAll(/handed over \((\d+) acks, (\d+) repeated\)/g)];
      expect(handed, done.stderr).toHaveLength(4);
      for (const [, acks, repeated] of handed) {
        expect(Number(acks)).toBeGreaterThan(0);
        expect(Number(repeated)).toBe(0);
      }
    }
    const analysis = readJson(join(onlyDir(join(dir, 'out')), 'analysis.json'));
    expect(analysis.runs).toHaveLength(4);
    for (const row of analysis.runs) expect(row.agents.split(',').sort()).toEqual(['host-a', 'host-b']);
    expect(analysis.definitions['runs[].agents']).toBeTruthy();
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

  it('refuses a second agent under a connected id with a clear error, exit 2', async () => {
    const dir = tempDir();
    const plan = writePlan(dir, constantRatePlan('dup', 2, 5));
    const { coord, url } = await listening(['start', '--agents', '2', '--plan', plan, '--out', join(dir, 'out')]);
    const coordSaid = stderrOf(coord);
    const first = agent(url, 'twin', join(dir, 'spool-1'));
    await until(coordSaid, /agent twin joined/, 30_000);
    const second = await agent(url, 'twin', join(dir, 'spool-2')).done;
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/LF_DUPLICATE_AGENT: .*agent id twin is already connected/);
    const other = agent(url, 'other', join(dir, 'spool-3'));
    const [res, f, o] = await Promise.all([coord.done, first.done, other.done]);
    expect(res.code, res.stderr).toBe(0);
    expect([f.code, o.code]).toEqual([0, 0]);
    expect(readRunJson(onlyDir(join(dir, 'out'))).requests).toBe(10);
  });

  it('a --stay agent stops its load when its coordinator dies, then serves the next coordinator', async () => {
    const dir = tempDir();
    const long = writePlan(dir, constantRatePlan('long', 30, 5), 'long.json');
    const short = writePlan(dir, constantRatePlan('short', 2, 5), 'short.json');
    const port = String(await freePort());
    const coordinator = (plan: string) =>
      startNode(
        'coordinator/main.js',
        ['start', '--listen', `127.0.0.1:${port}`, '--agents', '1', '--agent-grace-s', '3', '--plan', plan, '--out', join(dir, 'out')],
        TOKEN,
      );
    const first = coordinator(long);
    const stayer = agent(`ws://127.0.0.1:${port}`, 'stayer', join(dir, 'spool'), ['--stay']);
    const said = stderrOf(stayer);
    await waitFor(first.child.stderr!, /t=2s/, 60_000);
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await until(said, /stopping the load/, 30_000);
    // The coordinator's grace (3 s, told to the agent with the run) bounds how long load goes on.
    expect(Date.now() - killedAt).toBeLessThan(3000 + 3000);
    await until(said, /waiting for the next coordinator/, 30_000);
    const second = coordinator(short);
    const res = await second.done;
    expect(res.code, res.stderr).toBe(0);
    const runs = readdirSync(join(dir, 'out')).sort();
    const run = readRunJson(join(dir, 'out', runs.at(-1)!));
    expect(run.agents.map((a: any) => a.agent_id)).toEqual(['stayer']);
    expect(run.requests).toBe(10);
    expect(run.status).toBe('completed');
    // Released, it waits for a third coordinator rather than exiting; the dead run's spool was set aside.
    await until(said, /released by the coordinator[\s\S]*waiting for the next coordinator/, 30_000);
    expect(stayer.child.exitCode).toBeNull();
    stayer.child.kill('SIGTERM');
    const gone = await stayer.done;
    expect(gone.stderr).toMatch(/kept .*\.unsent \(its run is not in progress here\)/);
  });
});
