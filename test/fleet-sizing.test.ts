// The fleet sized before the load: agents measure themselves when they join, the
// coordinator projects each share against those figures before any request, refuses (with the
// fleet size the plan needs) or runs, and `coordinator plan` dry-runs the same numbers.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SIM_ARGS, writeSweep } from './fixture-plans.js';
import { constantRatePlan, onlyRunDir, readRunJson, runCoordinator, startNode, tempDir, writePlan } from './harness.js';

function dryRun(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return startNode('coordinator/main.js', ['plan', ...args]).done;
}

describe('fleet sizing', () => {
  it('refuses a share beyond the stated utilisation before any request, with the fleet size; passes with that many; the dry run agrees', async () => {
    const work = tempDir();
    const planPath = writePlan(work, constantRatePlan('sizing', 2, 40, { input_tokens: 16, output_tokens: 16 }));
    // The dry run on one agent: this host's self-test figures (measured once, then cached for the agents too).
    const one = await dryRun([planPath, '--agents', '1', '--json']);
    expect(one.code, one.stderr).toBe(0);
    const dry = JSON.parse(one.stdout);
    const elu1 = dry.headroom.agents[0].projected_elu as number;
    expect(elu1).toBeGreaterThan(0);
    expect(dry.classes.rt.requests).toBe(80);
    expect(dry.classes.rt.peak_starts_per_s).toBe(40);
    expect(dry.prompt_tokens).toBe(80 * 16);
    // A limit three quarters of one agent's projection: one agent is over it, two (half each) are not.
    const limit = String(Math.round(elu1 * 0.75 * 1e4) / 1e4);
    // The two local agents are stated two free cores (the machine's measured ones depend on other load).
    const flags = ['--headroom', 'strict', '--headroom-max-elu', limit, '--free-cores', '2'];
    const planned = JSON.parse((await dryRun([planPath, '--agents', '1', '--json', ...flags])).stdout);
    expect(planned.headroom.outcome).toBe('refused');
    expect(planned.headroom.agents_needed).toBe(2);

    const out1 = join(work, 'out1');
    const refused = await runCoordinator(['--plan', planPath, '--agents', '1', '--out', out1, ...flags]);
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toMatch(/LF_HEADROOM_REFUSED/);
    expect(refused.stderr).toMatch(/it needs 2 agent\(s\) like these on this machine; nothing was sent/);
    // Refused before the target was even started, and before any run directory.
    expect(refused.stderr).not.toMatch(/engine-sim listening/);
    expect(existsSync(out1)).toBe(false);

    const out2 = join(work, 'out2');
    const ran = await runCoordinator(['--plan', planPath, '--agents', '2', '--out', out2, ...flags]);
    expect(ran.code, ran.stderr).toBe(0);
    const run = readRunJson(onlyRunDir(out2));
    expect(run.headroom.outcome).toBe('passed');
    expect(run.headroom.agents_needed).toBe(2);
    expect(run.headroom.agents).toHaveLength(2);
    expect(run.headroom.local).toEqual({ agent_threads: 2, free_cores: 2, core_share: 1 });
    // The dry run's hash is the run's.
    expect(run.schedule_sha256).toBe(dry.schedule_sha256);
    expect(run.completed).toBe(80);
    for (const a of run.agents) {
      expect(a.self_test, a.agent_id).not.toBeNull();
      expect(a.self_test.cpu_us_per_start).toBeGreaterThan(0);
      expect(a.self_test.cpu_us_per_chunk).toBeGreaterThan(0);
      expect(a.self_test.cpu_us_per_finish).toBeGreaterThan(0);
      expect(a.self_test.memory_bytes_per_stream).toBeGreaterThan(0);
      expect(a.self_test.error_curve.length).toBeGreaterThan(0);
      expect(Object.keys(a.self_test.elu_at_error_ms)).toEqual(['1ms', '5ms', '20ms']);
    }
    expect(run.field_definitions['agents[].self_test.cpu_us_per_chunk']).toBeTruthy();
    expect(run.field_definitions['headroom.agents[].projected_elu']).toBeTruthy();
  }, 120_000);

  it('refuses by default a share over the ceiling itself, naming the fleet size the dry run names', async () => {
    const work = tempDir();
    const planPath = writePlan(work, constantRatePlan('over', 2, 5000, { input_tokens: 16, output_tokens: 64 }));
    // Agents on other machines: this many like this host's would do.
    const remote = JSON.parse((await dryRun([planPath, '--agents', '1', '--json'])).stdout);
    expect(remote.headroom.over_ceiling).toBe(true);
    expect(remote.headroom.agents_needed).toBeGreaterThan(1);
    // On this machine (one free core stated) no number of local agents would.
    const local = JSON.parse((await dryRun([planPath, '--agents', '1', '--json', '--local', '--free-cores', '1'])).stdout);
    expect(local.headroom.agents_needed).toBeNull();
    // … but the same number of agents on machines of their own would: the same figure, one sentence.
    expect(local.headroom.agents_needed_own_machines).toBe(remote.headroom.agents_needed);
    const out = join(work, 'out');
    const res = await runCoordinator(['--plan', planPath, '--agents', '1', '--out', out, '--free-cores', '1']);
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toMatch(/LF_HEADROOM_REFUSED/);
    expect(res.stderr).toContain(local.headroom.agents_needed_why);
    expect(res.stderr).toContain('use agents on other machines (--listen)');
    // The refusal names the fleet the plan needs, as the dry run on the same file does.
    expect(res.stderr).toContain(`it needs ${remote.headroom.agents_needed} agent(s) like these, each on a machine of its own`);
    const dryText = (await dryRun([planPath, '--agents', '1', '--local', '--free-cores', '1'])).stdout;
    expect(dryText).toContain(
      `fleet size the headroom rule asks for: ${remote.headroom.agents_needed} agent(s) like these, each on a machine of its own`,
    );
    expect(existsSync(out)).toBe(false);
  }, 60_000);

  it("dry-runs a sweep's stages with the schedule hashes its stages run", async () => {
    const dir = tempDir();
    const file = writeSweep(dir, { stage_duration_s: 3, warmup_s: 1, strategy: { type: 'stages', values: [1, 2] } });
    const dry = JSON.parse((await dryRun([file, '--agents', '1', '--json', '--self-test', 'skip'])).stdout);
    expect(dry.stages.map((s: any) => s.value)).toEqual([1, 2]);
    expect(dry.stages.map((s: any) => s.classes.rt.requests)).toEqual([3, 6]);
    const out = join(dir, 'out');
    const res = await startNode('coordinator/main.js', ['sweep', file, '--agents', '1', '--out', out, '--quiet', ...SIM_ARGS]).done;
    expect(res.code, res.stderr).toBe(0);
    const sweepDir = join(out, readdirSync(out)[0]!);
    const stages = JSON.parse(readFileSync(join(sweepDir, 'sweep.json'), 'utf8')).stages as { run_dir: string; value: number }[];
    // A stage that a loaded machine makes client-limited is measured again (the same value, the same
    // schedule) and may end the sweep early: every stage that ran has its value's dry-run hash.
    expect(stages.length).toBeGreaterThanOrEqual(1);
    for (const s of stages)
      expect(readRunJson(isAbsolute(s.run_dir) ? s.run_dir : join(sweepDir, s.run_dir)).schedule_sha256).toBe(
        dry.stages.find((d: any) => d.value === s.value).schedule_sha256,
      );
  }, 120_000);
});
