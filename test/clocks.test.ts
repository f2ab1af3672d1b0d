// suite: timing
// Clock domains and agent loss on one machine: wall-clock skew is injected per agent with the
// agent's test clock offset (the multi-host harness does the same with faketime in namespaces).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { buildSchedule } from '../shared/schedule.js';
import { takeStripe } from '../shared/shares.js';
import {
  constantRatePlan,
  listeningCoordinator,
  onlyRunDir,
  readRequests,
  readRunJson,
  startNode,
  tempDir,
  waitFor,
  writePlan,
} from './harness.js';

const PLAN = constantRatePlan('clocks', 4, 20);

/** Starts a listening coordinator and one agent per entry of `agentArgs`; resolves when all exit. */
async function fleet(
  coordArgs: string[],
  agentArgs: string[][],
  plan: Plan = PLAN,
  onStarted?: (agents: ReturnType<typeof startNode>[], coord: ReturnType<typeof startNode>) => void,
) {
  const work = tempDir();
  const { coord, url } = await listeningCoordinator(
    ['--agents', String(agentArgs.length), '--plan', writePlan(work, plan), '--out', join(work, 'out'), ...coordArgs],
    { LOADFLEET_TOKEN: 'clock-test' },
  );
  const agents = agentArgs.map((args, i) =>
    startNode('agent/main.js', ['--coordinator', url, '--id', `a${i + 1}`, ...args], { LOADFLEET_TOKEN: 'clock-test' }),
  );
  onStarted?.(agents, coord);
  const res = await coord.done;
  await Promise.all(agents.map((a) => a.done));
  const dir = onlyRunDir(join(work, 'out'));
  return { res, run: readRunJson(dir), rows: readRequests(dir) };
}

const lagMs = (r: any, sent: 'sent_unix_ns' | 'sent_local_ns'): number => Number(r[sent] - r.intended_unix_ns) / 1e6;

describe('clock domains', () => {
  it('catches a common domain that a skewed agent only claims, before any load', async () => {
    const { res, run, rows } = await fleet(
      [],
      [
        ['--clock-domain', 'chrony:dc1'],
        ['--clock-domain', 'chrony:dc1', '--test-clock-offset-ms', '250'],
      ],
    );
    expect(res.code).toBe(3);
    expect(run.status).toBe('aborted');
    expect(run.status_reason).toMatch(/declare clock domain chrony:dc1, but a2 is 2\d\d\.\d+ ms .* off, beyond the 2\.000 ms tolerance/);
    expect(rows).toHaveLength(0);
  });

  it('aligns a false common domain with measured offsets when asked, and says so', async () => {
    const { res, run } = await fleet(
      ['--on-clock-mismatch=align'],
      [
        ['--clock-domain', 'chrony:dc1'],
        ['--clock-domain', 'chrony:dc1', '--test-clock-offset-ms', '250'],
      ],
    );
    expect(res.code, res.stderr).toBe(0);
    expect(run.clock.alignment).toBe('measured-offsets');
    expect(run.status_reason).toMatch(/aligned with measured offsets instead/);
    const a2 = run.agents.find((a: any) => a.agent_id === 'a2');
    expect(Math.abs(a2.offset_ns - 250e6)).toBeLessThanOrEqual(a2.offset_uncertainty_ns + 1e6);
    expect(a2.run_probes).toBeGreaterThan(2);
  });

  it('maps different domains into the coordinator clock: aligned lag is small, raw local lag shows the skew', async () => {
    const { res, run, rows } = await fleet(
      [],
      [
        ['--clock-domain', 'host-a'],
        ['--clock-domain', 'host-b', '--test-clock-offset-ms', '-120'],
      ],
    );
    expect(res.code, res.stderr).toBe(0);
    expect(run.clock.alignment).toBe('measured-offsets');
    expect(run.clock.clock_domain_id).toMatch(/^coordinator:host:/);
    const skewed = rows.filter((r) => r.agent_id === 'a2');
    expect(skewed.length).toBeGreaterThan(30);
    const aligned = skewed.map((r) => lagMs(r, 'sent_unix_ns')).sort((x, y) => x - y);
    const raw = skewed.map((r) => lagMs(r, 'sent_local_ns')).sort((x, y) => x - y);
    expect(aligned[Math.floor(aligned.length / 2)]!).toBeLessThan(5);
    expect(raw[Math.floor(raw.length / 2)]!).toBeLessThan(-110); // its own clock reads 120 ms early
    expect(Math.abs(run.agents.find((a: any) => a.agent_id === 'a2').offset_ns + 120e6)).toBeLessThan(2e6);
    expect(run.clock.start_skew_ns).toBeLessThan(50e6);
  });
});

describe('agents that fail', () => {
  const long: Plan = {
    ...PLAN,
    duration_s: 8,
    classes: [{ ...PLAN.classes[0]!, load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 8, rate_per_s: 20 }] } }],
  };
  // Killed mid-run: timed from the coordinator's "armed; start in …" line, not from the agents'
  // spawn (joining, the self-test and the probes take longer on a loaded machine).
  const killSecondAfter = (ms: number) => (agents: ReturnType<typeof startNode>[], coord: ReturnType<typeof startNode>) => {
    void waitFor(coord.child.stderr!, /agents armed; start in/, 60_000).then(() => setTimeout(() => agents[1]!.child.kill('SIGKILL'), ms));
  };

  it('aborts beyond --max-agent-loss 0, and keeps every record the survivors sent', async () => {
    const { res, run, rows } = await fleet([], [[], [], []], long, killSecondAfter(4500));
    expect(res.code).toBe(3);
    expect(run.status).toBe('aborted');
    expect(run.status_reason).toMatch(/agent a2 was lost .*1 lost > --max-agent-loss 0/);
    expect(run.agents.find((a: any) => a.agent_id === 'a2').status).toBe('lost');
    for (const id of ['a1', 'a3']) {
      const agent = run.agents.find((a: any) => a.agent_id === id);
      expect(agent.requests).toBeGreaterThan(10);
      expect(rows.filter((r) => r.agent_id === id)).toHaveLength(agent.requests);
    }
  });

  it('completes degraded within --max-agent-loss 1; the survivors finish their whole stripes', async () => {
    const { res, run, rows } = await fleet(['--max-agent-loss', '1'], [[], [], []], long, killSecondAfter(4500));
    expect(res.code, res.stderr).toBe(0);
    expect(run.status).toBe('degraded');
    expect(run.status_reason).toMatch(/within --max-agent-loss 1/);
    const schedule = buildSchedule(long).classes[0]!;
    run.agents.forEach((a: any, index: number) => {
      if (a.status === 'lost') return;
      const stripe = takeStripe(schedule, { index, count: 3 }, 0).requestIndices.length;
      expect(rows.filter((r) => r.agent_id === a.agent_id && r.status === 'ok')).toHaveLength(stripe);
    });
    const lastIntervals = run.intervals.contributors.slice(-2);
    const lostIndex = run.agents.findIndex((a: any) => a.agent_id === 'a2');
    for (const iv of lastIntervals) expect(iv.agents).not.toContain(lostIndex);
  });

  it('restarts a killed agent with the same spool: its records arrive exactly once', async () => {
    const spool = tempDir('loadfleet-spool-');
    let restarted: Promise<unknown> = Promise.resolve();
    const { res, run, rows } = await fleet(
      ['--max-agent-loss', '1'],
      [
        ['--spool-dir', join(spool, '1')],
        ['--spool-dir', join(spool, '2')],
        ['--spool-dir', join(spool, '3')],
      ],
      long,
      (agents) => {
        // The run starts ~2.5 s after the agents (join, probes, a 2 s lead): kill it mid-run.
        setTimeout(() => agents[1]!.child.kill('SIGKILL'), 5500);
        restarted = new Promise((r) => setTimeout(r, 6500)).then(async () => {
          const url = /--coordinator (\S+)/.exec(agents[0]!.child.spawnargs.join(' '))![1]!;
          const again = await startNode('agent/main.js', ['--coordinator', url, '--id', 'a2', '--spool-dir', join(spool, '2')], {
            LOADFLEET_TOKEN: 'clock-test',
          }).done;
          expect(again.code, again.stderr).toBe(0);
          expect(again.stderr).toMatch(/uploaded \d+ spooled requests/);
        });
      },
    );
    await restarted;
    expect(res.code, res.stderr).toBe(0);
    const spooled = readdirSync(join(spool, '2')).filter((n) => n.endsWith('.done'));
    expect(spooled).toHaveLength(1);
    const entries =
      readFileSync(join(spool, '2', spooled[0]!), 'utf8')
        .trim()
        .split('\n').length - 1;
    const mine = rows.filter((r) => r.agent_id === 'a2');
    expect(new Set(mine.map((r) => `${r.class}:${r.request_index}`)).size).toBe(mine.length); // no duplicates
    expect(mine).toHaveLength(entries); // no gaps: everything it finished is there
    const a2 = run.agents.find((a: any) => a.agent_id === 'a2');
    expect(a2.status).toBe('lost');
    expect(a2.recovered_from_spool + run.duplicates_dropped).toBe(entries);
    expect(run.duplicates_dropped).toBeGreaterThan(0);
    expect(run.status_reason).toMatch(/a2 handed over \d+ spooled requests/);
  });
});
