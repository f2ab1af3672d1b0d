// suite: timing
// A drifting agent clock, end to end: an agent in a network namespace of its own runs under
// faketime at 1.0005× (500 ppm fast, exaggerated so a short run shows it) against a coordinator
// and a target in another namespace, beside a control agent in the same namespace under faketime
// at 0.1 ppm (it pays faketime's own cost, hosts/faketime.ts, without the drift). The coordinator fits the
// drift from probes taken while the agents prepare and steers from the first request on; the
// agent slews its run timeline onto the coordinator's, so its real sends (stamped by a proxy in
// front of the target, on the true clock) follow the global schedule and its recorded send times
// agree with those stamps; without the correction both would drift by 500 ppm of the elapsed time.
// Skips, saying why, where namespaces or faketime are not available.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nearestRank } from '../shared/histogram.js';
import type { Plan } from '../shared/plan.js';
import { onlyRunDir, readRequests, readRunJson, startNode, tempDir, writePlan } from './harness.js';
import { CONTROL_CLOCK, FAST_CLOCK, faketimeUnavailable } from './hosts/faketime.js';
import { netnsUnavailable } from './hosts/netns.js';
import { collectStamps } from './hosts/stamps.js';
import { skipFor } from './require.js';

const SKIP = skipFor('the clock drift test', netnsUnavailable() ?? faketimeUnavailable());
const TOKEN = 'drift-token';
// Namespaces of this test alone (their own prefix), joined by one veth pair.
const NS = { c: 'lf23d-c', a: 'lf23d-a' };
const IP = { c: '10.223.23.1', a: '10.223.23.2' };
// LOADFLEET_DRIFT_S makes the first case a longer measurement (docs/reliability.md quotes both).
const DURATION_S = Number(process.env.LOADFLEET_DRIFT_S ?? 30);
const RATE = 10;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function teardown(): void {
  for (const ns of Object.values(NS)) {
    try {
      ip('netns', 'del', ns);
    } catch {
      // not there
    }
  }
}

describe.skipIf(SKIP)('a drifting agent clock (faketime 1.0005× in its own namespace)', () => {
  let stopSim = (): void => {};

  beforeAll(async () => {
    teardown();
    for (const ns of Object.values(NS)) {
      ip('netns', 'add', ns);
      ip('-n', ns, 'link', 'set', 'lo', 'up');
    }
    ip('-n', NS.c, 'link', 'add', 'lf23dc', 'type', 'veth', 'peer', 'name', 'lf23da', 'netns', NS.a);
    ip('-n', NS.c, 'addr', 'add', `${IP.c}/24`, 'dev', 'lf23dc');
    ip('-n', NS.a, 'addr', 'add', `${IP.a}/24`, 'dev', 'lf23da');
    ip('-n', NS.c, 'link', 'set', 'lf23dc', 'up');
    ip('-n', NS.a, 'link', 'set', 'lf23da', 'up');
    const sim = startNode('sim/main.js', ['--host', '127.0.0.1', '--port', '8000', '--ttft-ms', '10', '--itl-ms', '4'], {}, [
      'ip',
      'netns',
      'exec',
      NS.c,
    ]);
    stopSim = () => sim.child.kill('SIGTERM');
    await new Promise<void>((resolve) => sim.child.stdout!.once('data', () => resolve()));
  });

  afterAll(() => {
    stopSim();
    teardown();
  });

  it('keeps its real sends on the global schedule and its records on the true timeline', async () => {
    const work = tempDir();
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'drift',
      seed: 23,
      duration_s: DURATION_S,
      drain_timeout_s: 5,
      target: { base_url: `http://${IP.c}:8001/v1`, api: 'chat', model: 'loadfleet-sim', timeout_s: 10 },
      classes: [
        {
          name: 'rt',
          prompt: { input_tokens: 16, output_tokens: 4 },
          load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: DURATION_S, rate_per_s: RATE }] },
        },
      ],
    };
    const inC = ['ip', 'netns', 'exec', NS.c];
    const proxy = startNode('test/hosts/stamp-proxy.js', ['8001', '127.0.0.1', '8000'], {}, inC);
    const stamps = collectStamps(proxy.child.stdout!);
    const coord = startNode(
      'coordinator/main.js',
      ['start', '--agents', '3', '--listen', '0.0.0.0:7000', '--plan', writePlan(work, plan), '--out', join(work, 'out'), '--quiet'],
      { LOADFLEET_TOKEN: TOKEN },
      inC,
    );
    await new Promise((r) => setTimeout(r, 500));
    const agent = startNode(
      'agent/main.js',
      ['--coordinator', `ws://${IP.c}:7000`, '--id', 'fast', '--clock-domain', 'lab:fast'],
      { LOADFLEET_TOKEN: TOKEN },
      ['ip', 'netns', 'exec', NS.a, 'faketime', '-f', FAST_CLOCK],
    );
    // The control: the same namespace, faketime at 0.1 ppm (its cost, not a drift), a clock domain of its own (steered too).
    const control = startNode(
      'agent/main.js',
      ['--coordinator', `ws://${IP.c}:7000`, '--id', 'control', '--clock-domain', 'lab:control'],
      { LOADFLEET_TOKEN: TOKEN },
      ['ip', 'netns', 'exec', NS.a, 'faketime', '-f', CONTROL_CLOCK],
    );
    // A third agent on the coordinator's host keeps the run in measured offsets (several clock domains).
    const steadyAgent = startNode(
      'agent/main.js',
      ['--coordinator', 'ws://127.0.0.1:7000', '--id', 'steady'],
      { LOADFLEET_TOKEN: TOKEN },
      inC,
    );
    const [res, a] = await Promise.all([coord.done, agent.done, steadyAgent.done, control.done]);
    proxy.child.kill('SIGTERM');
    expect(res.code, res.stderr).toBe(0);
    expect(a.code, a.stderr).toBe(0);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    const rows = readRequests(dir);
    expect(rows).toHaveLength(DURATION_S * RATE);
    expect(run.clock.alignment).toBe('measured-offsets');
    const ag = run.agents.find((x: any) => x.agent_id === 'fast');
    expect(ag.drift_ppm).toBeGreaterThan(450);
    expect(ag.drift_ppm).toBeLessThan(550);
    // The start instant: the first arrival of a constant rate is at 0.
    const startNs: bigint = rows.reduce((m: bigint, r: any) => (r.intended_unix_ns < m ? r.intended_unix_ns : m), rows[0].intended_unix_ns);
    // Per request: the real send (proxy stamp) against the schedule (lag) and the recorded send
    // against the stamp (rec); for the fast agent also as they would be uncorrected (its clock ahead
    // by its drift times the elapsed time: it would send that much early and record that much late).
    const perAgent = (id: string) =>
      rows
        .filter((r) => r.agent_id === id && stamps.has(r.request_index))
        .map((r) => {
          const stamp = stamps.get(r.request_index)!;
          const elapsedS = Number(r.intended_unix_ns - startNs) / 1e9;
          const aheadNs = elapsedS * 1e9 * ag.drift_ppm * 1e-6;
          const lag = Number(stamp - r.intended_unix_ns);
          const rec = Number(r.sent_unix_ns - stamp);
          return { elapsedS, lag, rec, lagRaw: lag - aheadNs, recRaw: rec + aheadNs };
        });
    const fast = perAgent('fast');
    const ctl = perAgent('control');
    const steady = perAgent('steady');
    expect(fast.length).toBeGreaterThanOrEqual(rows.filter((r) => r.agent_id === 'fast').length * 0.95);
    expect(ctl.length).toBeGreaterThanOrEqual(rows.filter((r) => r.agent_id === 'control').length * 0.95);
    const q = (xs: number[], p: number) =>
      nearestRank(
        [...xs].sort((x, y) => x - y),
        p,
      ) / 1e6;
    const median = (xs: number[]) => q(xs, 0.5);
    // Over the whole run, from the first request: each agent's recorded send against the proxy's
    // stamp (|rec|: the recording's error plus the hop to the proxy) and its real send against the
    // schedule (lag). The control shares the fast agent's namespace and faketime's cost: the fast
    // agent's distance from it is the clock's share.
    const whole = (xs: typeof fast) => ({
      rec_p50_ms: median(xs.map((x) => x.rec)),
      rec_abs_p99_ms: q(
        xs.map((x) => Math.abs(x.rec)),
        0.99,
      ),
      lag_p50_ms: median(xs.map((x) => x.lag)),
      lag_p99_ms: q(
        xs.map((x) => x.lag),
        0.99,
      ),
    });
    const health = (id: string) => {
      const a = run.agents.find((x: any) => x.agent_id === id);
      return { elu: a.event_loop_utilization, schedule_lag_p99_ms: a.schedule_lag_p99_ms };
    };
    const outside = {
      fast: { ...whole(fast), ...health('fast') },
      control: { ...whole(ctl), ...health('control') },
      steady: { ...whole(steady), ...health('steady') },
      client_limited: run.client_health.client_limited,
    };
    console.log(`drift measured from outside, whole run: ${JSON.stringify(outside)}`);
    // The last 10 s, where an uncorrected 500 ppm clock is 10–15 ms off, against the steady agent
    // on the coordinator's host (the observer's own delay is in both).
    const last = (xs: typeof fast) => xs.filter((x) => x.elapsedS >= DURATION_S - 10);
    const [f, c] = [last(fast), last(steady)];
    const ctlAg = run.agents.find((x: any) => x.agent_id === 'control');
    const figures = {
      drift_ppm: ag.drift_ppm,
      start_offset_minus_join_ms: (ag.start_offset_ns - ag.offset_ns) / 1e6,
      clock_residual_probes: ag.clock_residual_probes,
      clock_residual_p50_ms: ag.clock_residual_p50_ns / 1e6,
      clock_residual_max_ms: ag.clock_residual_max_ns / 1e6,
      clock_residual_proven_max_ms: ag.clock_residual_proven_max_ns / 1e6,
      clock_residual_end_ms: ag.clock_residual_end_ns / 1e6,
      control_drift_ppm: ctlAg.drift_ppm,
      control_clock_residual_max_ms: ctlAg.clock_residual_max_ns / 1e6,
      steady_last10s_rec_p50_ms: median(c.map((x) => x.rec)),
      fast_last10s_lag_p50_ms: median(f.map((x) => x.lag)),
      fast_last10s_rec_p50_ms: median(f.map((x) => x.rec)),
      fast_uncorrected_last10s_lag_p50_ms: median(f.map((x) => x.lagRaw)),
      fast_uncorrected_last10s_rec_p50_ms: median(f.map((x) => x.recRaw)),
    };
    console.log(`drift figures: ${JSON.stringify(figures)}`);
    const toleranceMs = 2;
    // The held-out residual over the whole run, from the first request: probes that never steered
    // measured the fast agent's run timeline (one in four in-run probes, about 7 in 30 s), and none
    // of them proves it beyond the tolerance; the gate says the same.
    expect(ag.clock_residual_probes).toBeGreaterThanOrEqual(5);
    expect(figures.clock_residual_proven_max_ms).toBeLessThan(toleranceMs);
    const check = run.data_quality.checks.find((c: any) => c.name === 'clock_residual');
    expect(check?.status, JSON.stringify(check)).toBe('pass');
    expect(check.evidence.agents.fast.heldout_probes).toBe(ag.clock_residual_probes);
    // Fitted before the start: the fast agent started on its offset at the start instant, which its
    // clock had moved to from the join's by 500 ppm of the preparation time.
    expect(figures.start_offset_minus_join_ms).toBeGreaterThan(0);
    // The recorded send against the real one, whole run: the fast agent's median within the
    // tolerance of the control's (same namespace, same faketime) — the clock error itself.
    expect(Math.abs(outside.fast.rec_p50_ms - outside.control.rec_p50_ms)).toBeLessThan(toleranceMs);
    expect(Math.abs(figures.fast_uncorrected_last10s_lag_p50_ms - figures.fast_last10s_lag_p50_ms)).toBeGreaterThan(toleranceMs * 3);
    expect(Math.abs(figures.fast_uncorrected_last10s_rec_p50_ms - figures.steady_last10s_rec_p50_ms)).toBeGreaterThan(toleranceMs * 3);

    // Raw values kept: each row carries the correction its send (and done) stamp was slewed back by,
    // so the agent's raw clock reading is the stamp plus it. For the fast agent that correction grows
    // at its drift: fitted over the last 10 s of sends (the start's catch-up has decayed by then),
    // its slope is the drift_ppm the probes found. The steady agent shares the coordinator's clock
    // (same host and boot, its anchor): it is not steered at all.
    const fastRows = rows.filter((r) => r.agent_id === 'fast' && r.status === 'ok');
    expect(fastRows.every((r) => typeof r.clock_correction_ns === 'number' && typeof r.clock_correction_done_ns === 'number')).toBe(true);
    const late = fastRows.filter((r) => Number(r.intended_unix_ns - startNs) / 1e9 >= DURATION_S - 10);
    const xs = late.map((r) => Number(r.sent_unix_ns - startNs));
    const ys = late.map((r) => r.clock_correction_ns as number);
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
    const my = ys.reduce((a, b) => a + b, 0) / ys.length;
    const slopePpm = (xs.reduce((a, x, i) => a + (x - mx) * (ys[i]! - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0)) * 1e6;
    // Over a request's life the correction moves at the slew rate: the drift plus the error left / 5 s.
    const inRequestPpm = median(
      late.map((r) => ((r.clock_correction_done_ns - r.clock_correction_ns) / Number(r.done_unix_ns - r.sent_unix_ns)) * 1e12),
    );
    // The last send's correction: what 500 ppm gives over the run, within the tolerance (the agent
    // started on its offset at the start instant, so what it gained since the join is not in it).
    const lastRow = late.at(-1)!;
    const raw = {
      correction_slope_ppm: slopePpm,
      in_request_rate_ppm_p50: inRequestPpm,
      last_correction_ms: lastRow.clock_correction_ns / 1e6,
      last_elapsed_s: Number(lastRow.sent_unix_ns - startNs) / 1e9,
      steady_max_abs_correction_ms:
        Math.max(...rows.filter((r) => r.agent_id === 'steady').map((r) => Math.abs(r.clock_correction_ns))) / 1e6,
    };
    console.log(`drift raw values: ${JSON.stringify(raw)}`);
    expect(Math.abs(raw.correction_slope_ppm - ag.drift_ppm)).toBeLessThan(0.1 * ag.drift_ppm);
    expect(Math.abs(raw.in_request_rate_ppm_p50 - ag.drift_ppm)).toBeLessThan(0.3 * ag.drift_ppm);
    expect(raw.last_correction_ms).toBeGreaterThan(ag.drift_ppm * 1e-6 * raw.last_elapsed_s * 1e3 - toleranceMs);
    expect(raw.last_correction_ms).toBeLessThan(ag.drift_ppm * 1e-6 * raw.last_elapsed_s * 1e3 + toleranceMs);
    expect(raw.steady_max_abs_correction_ms).toBe(0);
    expect(run.agents.find((x: any) => x.agent_id === 'steady').clock_slew_steps).toBe(0);
  });

  // A declared common clock domain is not steered (its sync is trusted to be finer than the
  // probes), but the declaration is checked through the run: an agent whose clock leaves the
  // domain fails clock_residual, named, instead of being trusted. Here both agents claim lab:dc
  // and the join check passes (the fast clock has only run a few seconds), then it runs away.
  it('fails clock_residual when an agent of a declared common domain drifts out of it', async () => {
    const work = tempDir();
    const seconds = 20;
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'drift-domain',
      seed: 23,
      duration_s: seconds,
      drain_timeout_s: 5,
      target: { base_url: `http://${IP.c}:8001/v1`, api: 'chat', model: 'loadfleet-sim', timeout_s: 10 },
      classes: [
        {
          name: 'rt',
          prompt: { input_tokens: 16, output_tokens: 4 },
          load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: seconds, rate_per_s: RATE }] },
        },
      ],
    };
    const inC = ['ip', 'netns', 'exec', NS.c];
    // The target, reachable from both namespaces (the engine listens on the coordinator's loopback).
    const proxy = startNode('test/hosts/stamp-proxy.js', ['8001', '127.0.0.1', '8000'], {}, inC);
    const toleranceMs = 5; // the join must pass: the fast clock gains 0.5 ms a second from its start
    const coord = startNode(
      'coordinator/main.js',
      [
        'start',
        '--agents',
        '2',
        '--listen',
        '0.0.0.0:7000',
        '--plan',
        writePlan(work, plan),
        '--out',
        join(work, 'out'),
        '--quiet',
        '--clock-tolerance-ms',
        String(toleranceMs),
      ],
      { LOADFLEET_TOKEN: TOKEN },
      inC,
    );
    await new Promise((r) => setTimeout(r, 500));
    const agent = startNode(
      'agent/main.js',
      ['--coordinator', `ws://${IP.c}:7000`, '--id', 'fast', '--clock-domain', 'lab:dc'],
      { LOADFLEET_TOKEN: TOKEN },
      ['ip', 'netns', 'exec', NS.a, 'faketime', '-f', FAST_CLOCK],
    );
    const steadyAgent = startNode(
      'agent/main.js',
      ['--coordinator', 'ws://127.0.0.1:7000', '--id', 'steady', '--clock-domain', 'lab:dc'],
      { LOADFLEET_TOKEN: TOKEN },
      inC,
    );
    const [res] = await Promise.all([coord.done, agent.done, steadyAgent.done]);
    proxy.child.kill('SIGTERM');
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    const rows = readRequests(dir);
    expect(run.clock.alignment, `${res.stderr}\n${run.status_reason}`).toBe('explicit-common-clock-domain');
    expect(rows).toHaveLength(seconds * RATE);
    const fast = run.agents.find((x: any) => x.agent_id === 'fast');
    const steady = run.agents.find((x: any) => x.agent_id === 'steady');
    // Not steered: nothing was slewed, and the records say so.
    expect(fast.clock_slew_steps).toBe(0);
    expect(rows.every((r) => r.clock_correction_ns === 0)).toBe(true);
    // Its drift is measured and stated all the same, and the residual from the domain grew with it.
    expect(fast.drift_ppm).toBeGreaterThan(450);
    expect(fast.drift_ppm).toBeLessThan(550);
    const check = run.data_quality.checks.find((c: any) => c.name === 'clock_residual');
    console.log(`declared domain: ${JSON.stringify({ fast: fast.clock_residual_max_ns, steady: steady.clock_residual_max_ns, check })}`);
    expect(fast.clock_residual_max_ns).toBeGreaterThan(toleranceMs * 1e6 + fast.offset_uncertainty_ns);
    expect(check.status).toBe('fail');
    expect(check.reason).toMatch(/^fast: residual \d+\.\d+ ms .* from its declared clock domain/);
    expect(check.evidence.agents.steady.residual_max_ms).toBeLessThan(toleranceMs);
    expect(run.data_quality.valid).toBe(false);
  });
});
