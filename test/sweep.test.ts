// suite: timing
// `coordinator sweep` end to end: real coordinator, agents and engine-sim processes on loopback.
// Stages are short (6 s) against the simple engine, whose capacity follows from its timing; the
// ways a sweep ends early, which judge no stage near it, are in sweep-endings.test.ts.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPUTED_CAPACITY, SIM_ARGS, writeSweep } from './fixture-plans.js';
import { startNode, tempDir } from './harness.js';

function runSweep(file: string, out: string, extra: string[] = []) {
  return startNode('coordinator/main.js', ['sweep', file, '--agents', '2', '--out', out, '--quiet', ...SIM_ARGS, ...extra]);
}

function readSweep(out: string): any {
  const [dir] = readdirSync(out);
  return { ...JSON.parse(readFileSync(join(out, dir!, 'sweep.json'), 'utf8')), dir: join(out, dir!) };
}

describe('coordinator sweep', () => {
  it('bisect finds the computed capacity within ±15%', async () => {
    const dir = tempDir();
    const file = writeSweep(dir, { strategy: { type: 'bisect', pass: 3, fail: 6, resolution: 0.5 } });
    const done = await runSweep(file, join(dir, 'out')).done;
    expect(done.code, done.stderr).toBe(0);
    const s = readSweep(join(dir, 'out'));
    // On failure, say which stage was limited by what (agents and reasons), not only that it was.
    const why = JSON.stringify(s.stages.map((x: any) => [x.value, x.verdict, x.client_limited_agents, x.run_status_reason]));
    expect(s.stop_rule, `${s.stop_reason}; stages: ${why}`).toBe('done');
    expect(s.stages.map((x: any) => x.verdict)).not.toContain('client_limited');
    expect(Math.abs(s.capacity - COMPUTED_CAPACITY) / COMPUTED_CAPACITY, `capacity ${s.capacity} vs ${COMPUTED_CAPACITY}`).toBeLessThan(
      0.15,
    );
    expect(s.bracket[1] - s.bracket[0]).toBeLessThanOrEqual(0.5);
    // The bracket is the claim: the computed capacity lies inside it.
    expect(s.bracket[0]).toBeLessThanOrEqual(COMPUTED_CAPACITY);
    expect(s.bracket[1]).toBeGreaterThanOrEqual(COMPUTED_CAPACITY);
    // The failing end saturated: achieved throughput is the server's, not the offered 6 req/s.
    const at6 = s.stages.find((x: any) => x.value === 6);
    expect(at6.verdict).toBe('fail');
    expect(Math.abs(at6.achieved_rps - COMPUTED_CAPACITY) / COMPUTED_CAPACITY).toBeLessThan(0.15);
    for (const st of s.stages) expect(existsSync(join(st.run_dir, 'run.json'))).toBe(true);
    expect(s.answer).toContain(`Capacity ${s.capacity} req/s`);
    expect(done.stdout).toContain(`capacity ${s.capacity} req/s, bracket [${s.bracket[0]}, ${s.bracket[1]}]`);
    const html = readFileSync(join(s.dir, 'report.html'), 'utf8');
    expect(html).toContain(`capacity ${s.capacity}`);
    // Latency and throughput against load, and the Pareto front of the stages.
    expect(html.match(/<svg /g)).toHaveLength(3);
  });

  it('on a busy machine with event-loop stalls a client-limited stage is measured again and the capacity still found within ±15%', async () => {
    const dir = tempDir();
    const file = writeSweep(dir, { strategy: { type: 'bisect', pass: 3, fail: 6, resolution: 0.5 } });
    // A neighbour that keeps one of the machine's cores busy for the whole sweep (a shared CI
    // runner, a laptop), and stalls injected into the agents' own loops: agent-1 blocks 100 ms
    // every 5 s in every stage (isolated stalls: never a verdict), agent-3 is starved in its first
    // stage only (a stage the client really limited: it must be measured again).
    const neighbour = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    try {
      const done = await startNode('coordinator/main.js', [
        'sweep',
        file,
        '--agents',
        '3',
        '--out',
        join(dir, 'out'),
        '--quiet',
        ...SIM_ARGS,
        '--local-layout=process-per-agent',
        '--agent-arg=--test-stall=agent-1:100/5000',
        '--agent-arg=--test-stall=agent-3:60/100@1',
      ]).done;
      expect(done.code, done.stderr).toBe(0);
      const s = readSweep(join(dir, 'out'));
      const why = JSON.stringify(s.stages.map((x: any) => [x.value, x.measurement, x.verdict, x.reason]));
      console.log(`busy sweep: capacity ${s.capacity}, bracket ${JSON.stringify(s.bracket)}; stages ${why}`);
      expect(s.client_limited_remeasures).toBe(2);
      // The first stage was limited by agent-3, said with the second and what was seen; then measured again.
      expect(s.stages[0]).toMatchObject({ value: 3, measurement: 1, verdict: 'client_limited' });
      expect(s.stages[0].client_limited_agents.map((a: any) => a.agent_id)).toContain('agent-3');
      expect(s.stages[0].reason).toMatch(/agent-3: /);
      expect(s.stages[1]).toMatchObject({ value: 3, measurement: 2 });
      // The re-measure decides (a machine busier still may need the second re-measure: within the bound).
      const at3 = s.stages.filter((x: any) => x.value === 3);
      expect(at3.at(-1).verdict, why).toBe('pass');
      expect(at3.length).toBeLessThanOrEqual(3);
      expect(s.stop_rule, `${s.stop_reason}; stages: ${why}`).toBe('done');
      expect(s.client_advice).toBeNull();
      expect(Math.abs(s.capacity - COMPUTED_CAPACITY) / COMPUTED_CAPACITY, `capacity ${s.capacity} vs ${COMPUTED_CAPACITY}`).toBeLessThan(
        0.15,
      );
      expect(s.bracket[0]).toBeLessThanOrEqual(COMPUTED_CAPACITY);
      expect(s.bracket[1]).toBeGreaterThanOrEqual(COMPUTED_CAPACITY);
      // agent-1's isolated stalls are in the evidence, by second, without deciding any stage.
      const stalls = s.stages.flatMap((x: any) => JSON.parse(readFileSync(join(x.run_dir, 'run.json'), 'utf8')).client_health.stalls);
      console.log(`busy sweep stalls: ${JSON.stringify(stalls.slice(0, 8))}`);
    } finally {
      neighbour.kill('SIGKILL');
    }
  });

  it('stops escalating after max_failing_stages and never starts the heavier stage', async () => {
    const dir = tempDir();
    const file = writeSweep(dir, { strategy: { type: 'stages', values: [1, 8, 12] }, stop: { max_failing_stages: 1 } });
    const done = await runSweep(file, join(dir, 'out')).done;
    expect(done.code, done.stderr).toBe(0);
    const s = readSweep(join(dir, 'out'));
    expect(s.stages.map((x: any) => [x.value, x.verdict])).toEqual([
      [1, 'pass'],
      [8, 'fail'],
    ]);
    expect(s.stop_rule).toBe('max_failing_stages');
    expect(s.bracket).toEqual([1, 8]);
    expect(readdirSync(join(s.dir, 'stages'))).toHaveLength(2);
  });

  it('a stage run by a starved agent is client_limited, never capacity, and says how many agents to add', async () => {
    const dir = tempDir();
    const file = writeSweep(dir, { strategy: { type: 'stages', values: [3, 4] } });
    // One process per agent: starving agent-2's loop must not starve another agent packed beside it.
    const done = await runSweep(file, join(dir, 'out'), ['--agent-arg=--test-starve=agent-2', '--local-layout=process-per-agent']).done;
    expect(done.code, done.stderr).toBe(0);
    const s = readSweep(join(dir, 'out'));
    // Measured again twice (the client's trouble might have passed); it did not, so the sweep stops
    // and says which agent and why.
    expect(s.stages.map((x: any) => [x.value, x.measurement, x.verdict])).toEqual([
      [3, 1, 'client_limited'],
      [3, 2, 'client_limited'],
      [3, 3, 'client_limited'],
    ]);
    for (const st of s.stages) expect(st.client_limited_agents.map((a: any) => a.agent_id)).toEqual(['agent-2']);
    expect(s.capacity).toBeNull();
    expect(s.stop_rule).toBe('client_limited');
    expect(s.stop_reason).toMatch(
      /^the stage at 3 was client-limited in all 3 measurements \(the first and 2 re-measures\), the last: client-limited: agent-2: /,
    );
    expect(s.client_advice.agents_needed).toBeGreaterThanOrEqual(3);
    expect(s.answer).toContain('add agents or workers');
  });
});
