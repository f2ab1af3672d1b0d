// The headroom projection with numbers worked by hand: a constant 4 req/s of 20-token replies at an
// assumed 250 ms TTFT and 40 tokens/s (each request streams 0.75 s, its 20 chunks over the last 0.5 s).
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../shared/plan.js';
import { buildSchedule } from '../../shared/schedule.js';
import type { SelfTestFigures } from '../../shared/self-test.js';
import { fleetSizeText, headroomReport } from './index.js';
import type { ServerSpeed } from './load.js';
import { agentLoads, classTotals } from './load.js';
import type { FleetAgent } from './rule.js';
import { fleetSizeNeeded, judge, peakCpuPerS, tightestSloMs } from './rule.js';

const SPEED: ServerSpeed = { ttftMs: 250, tokensPerS: 40 };

function plan(slo?: number): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: 'headroom',
    seed: 1,
    duration_s: 10,
    classes: [
      {
        name: 'rt',
        prompt: { input_tokens: 100, output_tokens: 20 },
        load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 10, rate_per_s: 4 }] },
        ...(slo === undefined ? {} : { slo: { ttft_p95_ms: slo } }),
      },
    ],
  } as Plan;
}

// 25 ms CPU per start, 2.5 ms per chunk, 12.5 ms per finish: a steady second of 4 starts, 80
// chunks and 4 finishes is 0.1 + 0.2 + 0.05 = 0.35 CPU-seconds.
const FIGURES: SelfTestFigures = {
  version: 1,
  measured_at: new Date().toISOString(),
  source: 'measured',
  duration_ms: 2000,
  node: 'v20',
  cpus: 2,
  free_cores: 1,
  cpu_us_per_start: 25_000,
  cpu_us_per_chunk: 2_500,
  cpu_us_per_finish: 12_500,
  memory_bytes_per_stream: 4096,
  memory_streams: 400,
  error_curve: [
    { elu: 0.1, p99_ms: 1, n: 100 },
    { elu: 0.5, p99_ms: 11, n: 100 },
  ],
  elu_at_error_ms: { '1ms': 0.1, '5ms': 0.26, '20ms': null },
  uncertainty_coverage: 0.97,
};

const agents = (n: number): FleetAgent[] => Array.from({ length: n }, (_, i) => ({ id: `a${i}`, figures: FIGURES, workers: 1 }));

describe('agent loads', () => {
  it('counts starts, chunks, finishes and open streams per second of one agent', () => {
    const p = plan();
    const [a] = agentLoads(p, buildSchedule(p), 1, SPEED);
    expect(a!.requests).toBe(40);
    expect(a!.prompt_tokens).toBe(4000);
    expect(a!.peak_starts_per_s).toBe(4);
    expect(a!.peak_finishes_per_s).toBe(4);
    // Second 0 holds 20 + 20 + 10 chunks (the first three requests) and one finish (the first, at
    // 0.75 s); every later full second 80 chunks.
    expect([a!.seconds.starts[0], a!.seconds.chunks[0], a!.seconds.finishes[0]]).toEqual([4, 50, 1]);
    expect(a!.peak_chunks_per_s).toBe(80);
    // 0.75 s streams every 0.25 s: three open at once.
    expect(a!.peak_streams).toBe(3);
  });

  it('splits the stripe: two agents take every other request', () => {
    const p = plan();
    const loads = agentLoads(p, buildSchedule(p), 2, SPEED);
    for (const l of loads) {
      expect(l.requests).toBe(20);
      expect(l.peak_starts_per_s).toBe(2);
      expect(l.peak_chunks_per_s).toBe(40);
      expect(l.peak_streams).toBe(2);
    }
    expect(classTotals(p, buildSchedule(p), SPEED)).toEqual({ rt: { requests: 40, prompt_tokens: 4000 } });
  });

  it('gives each agent exactly its stripe of a second class and of sessions (agents computed one at a time)', () => {
    const p = plan();
    p.classes.push(
      {
        name: 'burst',
        prompt: { input_tokens: 10, output_tokens: 20 },
        load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 10, rate_per_s: 7 }] },
      },
      {
        name: 'chat',
        prompt: { output_tokens: 20 },
        load: {
          model: 'sessions',
          phases: [{ start_s: 0, duration_s: 10, rate_per_s: 1 }],
          session: { turns: 3, user_tokens: 10, think_time_s: 1 },
        },
      },
    );
    const s = buildSchedule(p);
    const [whole] = agentLoads(p, s, 1, SPEED);
    for (let n = 2; n <= 5; n++) {
      const loads = agentLoads(p, s, n, SPEED);
      expect(loads.map((l) => l.agent)).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(loads.reduce((t, l) => t + l.requests, 0)).toBe(whole!.requests);
      expect(loads.reduce((t, l) => t + l.prompt_tokens, 0)).toBe(whole!.prompt_tokens);
      const starts = loads.reduce((t, l) => t + l.seconds.starts.reduce((a, b) => a + b, 0), 0);
      expect(starts).toBe(whole!.seconds.starts.reduce((a, b) => a + b, 0));
      for (const l of loads) expect(l.peak_streams).toBeLessThanOrEqual(whole!.peak_streams);
    }
  });

  it('keeps a closed loop’s streams in flight: 6 streams of 0.75 s start 8 a second', () => {
    const p = plan();
    p.classes[0]!.load = { model: 'concurrency', phases: [{ start_s: 0, duration_s: 10, concurrency: 6 }] };
    const [a] = agentLoads(p, buildSchedule(p), 1, SPEED);
    expect(a!.peak_streams).toBe(6);
    expect(a!.peak_starts_per_s).toBeCloseTo(8, 9);
    // 6 streams × 40 tokens/s × the 2/3 of each request that streams.
    expect(a!.peak_chunks_per_s).toBeCloseTo(160, 9);
    expect(a!.requests).toBe(80);
  });
});

describe('headroom rule', () => {
  it('projects CPU, utilisation and the implied error', () => {
    const p = plan(50);
    const loads = agentLoads(p, buildSchedule(p), 1, SPEED);
    expect(peakCpuPerS(loads[0]!, FIGURES)).toBeCloseTo(0.35, 9);
    const v = judge(loads, agents(1), tightestSloMs(p), { maxElu: 0.3, maxSloShare: 0.1 });
    const a = v.agents[0]!;
    expect(a.projected_elu).toBe(0.35);
    // 1 ms + (0.35 − 0.1)/(0.5 − 0.1) × (11 − 1) ms.
    expect(a.implied_error_p99_ms).toBe(7.25);
    expect(a.stream_memory_bytes).toBe(3 * 4096);
    expect(a.problems).toHaveLength(2);
    expect(v.ok).toBe(false);
    expect(v.over_ceiling).toBe(false);
  });

  it('halves with two agents and passes: 0.175 utilisation, 2.875 ms', () => {
    const p = plan(50);
    const v = judge(agentLoads(p, buildSchedule(p), 2, SPEED), agents(2), 50, { maxElu: 0.3, maxSloShare: 0.1 });
    expect(v.agents.map((a) => [a.projected_elu, a.implied_error_p99_ms])).toEqual([
      [0.175, 2.875],
      [0.175, 2.875],
    ]);
    expect(v.ok).toBe(true);
  });

  it('sizes the fleet: 2 agents for 30% utilisation, 4 for 10% (3 leave a second with 2 starts)', () => {
    const p = plan();
    const s = buildSchedule(p);
    const loadsFor = (n: number) => agentLoads(p, s, n, SPEED);
    expect(fleetSizeNeeded(loadsFor, agents(1)[0]!, null, { maxElu: 0.3, maxSloShare: 0.1 }, 1).agents).toBe(2);
    expect(fleetSizeNeeded(loadsFor, agents(1)[0]!, null, { maxElu: 0.1, maxSloShare: 0.1 }, 1).agents).toBe(4);
    // Started from too many, it comes down to the smallest.
    expect(fleetSizeNeeded(loadsFor, agents(1)[0]!, null, { maxElu: 0.3, maxSloShare: 0.1 }, 7).agents).toBe(2);
  });

  it('says when no fleet size can meet the SLO share: an idle agent already errs 1 ms', () => {
    const p = plan(5);
    const s = buildSchedule(p);
    const r = fleetSizeNeeded((n) => agentLoads(p, s, n, SPEED), agents(1)[0]!, 5, { maxElu: 0.7, maxSloShare: 0.1 }, 1);
    expect(r.agents).toBeNull();
    expect(r.why).toMatch(/idle agent's stamp error p99 \(1\.0 ms\) is over 10% of the tightest SLO bound \(5 ms\)/);
  });

  it('refuses over the ceiling by default, at the limits when strict, never when warn', () => {
    const p = plan();
    const s = buildSchedule(p);
    const heavy: SelfTestFigures = { ...FIGURES, cpu_us_per_chunk: 12_500 }; // 0.1 + 1.0 + 0.05 = 1.15 CPU-s/s
    const one = [{ id: 'a0', figures: heavy, workers: 1 }];
    const opts = { limits: { maxElu: 0.7, maxSloShare: 0.1 }, speed: SPEED };
    const refused = headroomReport(p, s, one, { ...opts, policy: 'refuse' });
    expect(refused.outcome).toBe('refused');
    expect(refused.over_ceiling).toBe(true);
    expect(refused.agents_needed).toBe(2);
    expect(headroomReport(p, s, one, { ...opts, policy: 'warn' }).outcome).toBe('warned');
    // Two workers halve it: 0.575, under the ceiling but over 0.5.
    const twoThreads = [{ id: 'a0', figures: heavy, workers: 2 }];
    expect(headroomReport(p, s, twoThreads, { ...opts, policy: 'refuse' }).outcome).toBe('passed');
    expect(headroomReport(p, s, twoThreads, { ...opts, limits: { maxElu: 0.5, maxSloShare: 0.1 }, policy: 'refuse' }).outcome).toBe(
      'warned',
    );
    expect(headroomReport(p, s, twoThreads, { ...opts, limits: { maxElu: 0.5, maxSloShare: 0.1 }, policy: 'strict' }).outcome).toBe(
      'refused',
    );
  });

  it('does not project agents without figures, and says so', () => {
    const p = plan();
    const r = headroomReport(p, buildSchedule(p), [{ id: 'x', figures: null, workers: 1 }], {
      policy: 'refuse',
      limits: { maxElu: 0.7, maxSloShare: 0.1 },
      speed: SPEED,
    });
    expect(r.unknown).toEqual(['x']);
    expect(r.agents_needed).toBeNull();
    expect(r.outcome).toBe('passed');
  });

  it('counts the cores a local fleet shares: 4 agents on 2 free cores get half a core each', () => {
    const p = plan();
    const s = buildSchedule(p);
    const opts = { policy: 'refuse' as const, limits: { maxElu: 0.3, maxSloShare: 0.1 }, speed: SPEED };
    const four = headroomReport(p, s, agents(4), opts, { freeCores: 2 });
    expect(four.local).toEqual({ agent_threads: 4, free_cores: 2, core_share: 0.5 });
    // Each share is 0.0875 CPU-seconds a second, on half a core.
    expect(four.agents.map((a) => a.projected_elu)).toEqual([0.175, 0.175, 0.175, 0.175]);
    // Two agents (a core each) are what this plan needs at 30%; past the free cores more agents do not help.
    expect(four.agents_needed).toBe(2);
    const strict = headroomReport(p, s, agents(1), { ...opts, limits: { maxElu: 0.1, maxSloShare: 0.1 } }, { freeCores: 2 });
    expect(strict.agents_needed).toBeNull();
    expect(strict.agents_needed_why).toMatch(/more CPU than the 2 free core\(s\) of this machine give/);
    // … yet a number of agents on machines of their own would: the dry run's figure, in the same sentence everywhere.
    const remote = headroomReport(p, s, agents(1), { ...opts, limits: { maxElu: 0.1, maxSloShare: 0.1 } });
    expect(remote.agents_needed).toBe(4);
    expect(strict.agents_needed_own_machines).toBe(4);
    expect(fleetSizeText(strict)).toBe(
      '4 agent(s) like these, each on a machine of its own (more CPU than the 2 free core(s) of this machine give: use agents on other machines (--listen))',
    );
    expect(fleetSizeText(remote)).toBe('4 agent(s) like these');
    expect(fleetSizeText(four)).toBe('2 agent(s) like these on this machine');
  });

  it('packed: agents served by one process share its loop, which gets a whole core', () => {
    const p = plan();
    const s = buildSchedule(p);
    const opts = { policy: 'refuse' as const, limits: { maxElu: 0.3, maxSloShare: 0.1 }, speed: SPEED };
    const fleet = agents(4);
    const groups = [
      ['a0', 'a1'],
      ['a2', 'a3'],
    ];
    const packed = headroomReport(p, s, fleet, opts, { freeCores: 2, groups });
    // Two loops on two free cores: a core each, carrying two shares of 0.0875 CPU-s/s (cpu_per_s rounds to 3 places).
    expect(packed.local).toEqual({ agent_threads: 2, free_cores: 2, core_share: 1 });
    expect(packed.agents.map((a) => [a.cpu_per_s, a.projected_elu])).toEqual([
      [0.088, 0.175],
      [0.088, 0.175],
      [0.088, 0.175],
      [0.088, 0.175],
    ]);
    // On one free core the two loops get half of it each.
    expect(headroomReport(p, s, fleet, opts, { freeCores: 1, groups }).agents[0]!.projected_elu).toBe(0.35);
    // Agents with worker threads keep them: their process does not share a loop.
    const threaded = headroomReport(
      p,
      s,
      agents(4).map((a) => ({ ...a, workers: 2 })),
      opts,
      { freeCores: 2, groups },
    );
    expect(threaded.local?.agent_threads).toBe(8);
  });
});
