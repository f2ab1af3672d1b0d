// An experiment whose coordinator is SIGKILLed in the middle of its second run, restarted with
// `--resume`: the first run is kept as it was, the second is recovered from its journal in its own
// directory (the two standing --stay agents rejoin within their grace: every planned request once),
// the remaining arms × repeats are run and analysis.json is written over all four.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXPERIMENT } from './fixture-plans.js';
import { freePort, readRequests, readRunJson, startNode, startSim, tempDir, waitFor, writePlan } from './harness.js';

const TOKEN = { LOADFLEET_TOKEN: 'experiment-recover-token' };
const readJson = (path: string): any => JSON.parse(readFileSync(path, 'utf8'));
const DURATION_S = 6;
const RATE = 5;

describe('an experiment whose coordinator is killed mid-run', () => {
  const stops: (() => void)[] = [];
  afterAll(() => {
    for (const s of stops) s();
  });

  it('--resume recovers the run under way from its journal, runs the rest and writes analysis.json', async () => {
    const work = tempDir();
    const sim = await startSim(['--ttft-ms', '10', '--itl-ms', '4']);
    stops.push(sim.stop);
    // Constant-rate classes, so every run's planned request count is known: rt 5 req/s, bulk 5 req/s.
    const phase = { start_s: 0, duration_s: DURATION_S, rate_per_s: RATE };
    writePlan(
      work,
      {
        schema: 'loadfleet.plan/v1',
        name: 'e2e-recover',
        seed: 3,
        duration_s: DURATION_S,
        drain_timeout_s: 5,
        target: { base_url: sim.baseUrl, api: 'chat', model: 'loadfleet-sim', timeout_s: 10 },
        classes: [
          { name: 'rt', prompt: { input_tokens: 32, output_tokens: 8 }, load: { model: 'constant-rate', phases: [phase] } },
          { name: 'bulk', prompt: { input_tokens: 64, output_tokens: 8 }, load: { model: 'constant-rate', phases: [phase] } },
        ],
        windows: [{ name: 'surge', start_s: 1, end_s: 5 }],
      } as never,
      'plan.json',
    );
    const file = join(work, 'e.experiment.json');
    writeFileSync(file, JSON.stringify(EXPERIMENT));
    const out = join(work, 'out');
    const port = await freePort();
    const args = ['experiment', file, '--out', out, '--resume', '--agents', '2', '--agent-grace-s', '30', '--listen', `127.0.0.1:${port}`];
    const first = startNode('coordinator/main.js', args, TOKEN);
    const [, url] = await waitFor(first.child.stderr!, /waiting for \d+ agent\(s\) at (wss?:\/\/[\d.:]+)/);
    const agents = ['s1', 's2'].map((id) =>
      startNode('agent/main.js', ['--coordinator', url!, '--id', id, '--spool-dir', join(work, 'spool'), '--stay'], TOKEN),
    );
    for (const a of agents) stops.push(() => a.child.kill('SIGTERM'));
    await waitFor(first.child.stderr!, /run 2\/4: [^\n]*\n[\s\S]*t=3s/, 90_000);
    first.child.kill('SIGKILL');
    expect((await first.done).code).toBeNull();
    const dir = join(out, readdirSync(out)[0]!);
    const before = readJson(join(dir, 'manifest.json'));
    expect(before.runs[0].status).toMatch(/completed|degraded/);
    expect(before.runs[1]).toMatchObject({ status: 'running', run_dir: null });
    const runDirs = readdirSync(join(dir, 'runs')).sort();
    expect(runDirs).toHaveLength(2);
    const second = join(dir, 'runs', runDirs[1]!);
    expect(existsSync(join(second, 'journal', 'run.journal'))).toBe(true);
    const firstRunJson = readFileSync(join(dir, before.runs[0].run_dir, 'run.json'), 'utf8');

    const again = await startNode('coordinator/main.js', args, TOKEN).done;
    for (const a of agents) a.child.kill('SIGTERM');
    await Promise.all(agents.map((a) => a.done));
    expect(again.code, again.stderr).toBe(0);
    const { arm, repeat } = before.runs[1];
    expect(again.stderr).toContain(`arm "${arm}" repeat ${repeat} was under way when the coordinator stopped: recovering`);
    expect(again.stderr).toMatch(/2 of 4 runs already finished/);
    const after = readJson(join(dir, 'manifest.json'));
    expect(after.runs[0]).toEqual(before.runs[0]);
    expect(readFileSync(join(dir, before.runs[0].run_dir, 'run.json'), 'utf8')).toBe(firstRunJson);
    expect(after.runs[1].run_dir).toBe(join('runs', runDirs[1]!));
    expect(after.runs[1].aborted_attempts).toEqual([]);
    expect(after.runs[1].recovered.outage_s).toBeGreaterThan(0);
    expect(after.definitions['runs[].recovered']).toBeTruthy();
    for (const e of after.runs) expect(['completed', 'degraded']).toContain(e.status);
    // The recovered run: every planned request of its arm's classes once.
    const classes = arm === 'rt only' ? 1 : 2;
    const run = readRunJson(second);
    expect(run.recovered.during_load).toBe(true);
    // request_index counts within a class: each class of the arm, 0..n−1 once.
    const rows = readRequests(second);
    for (const cls of classes === 1 ? ['rt'] : ['rt', 'bulk']) {
      const indices = rows
        .filter((r) => r.class === cls)
        .map((r) => Number(r.request_index))
        .sort((a, b) => a - b);
      expect(indices, cls).toEqual(Array.from({ length: DURATION_S * RATE }, (_, i) => i));
    }
    expect(rows).toHaveLength(classes * DURATION_S * RATE);
    expect(readdirSync(join(dir, 'runs'))).toHaveLength(4);
    expect(readJson(join(dir, 'analysis.json')).run_count).toBe(4);
    console.log(
      `experiment recover: outage ${after.runs[1].recovered.outage_s.toFixed(2)} s; recovered run down_from_s ${run.recovered.down_from_s} restarted_at_s ${run.recovered.restarted_at_s}, replayed ${run.recovered.replayed_messages} messages`,
    );
  }, 180_000);
});
