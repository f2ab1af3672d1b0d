// A clean cache between runs: a sweep whose target asks for it empties engine-sim's prefix cache
// before every stage, so each stage's first request finds nothing cached (its prompt's shared
// prefix is computed again) while the stage's later requests hit it; a sweep without it starts on
// the cache the last one left. One agent: the point is the cache, and a starved second agent on a
// busy machine would make stages client-limited (measured again, on a warmer cache).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { readRequests, readRunJson, startNode, startSim, tempDir, writePlan } from './harness.js';

function plan(baseUrl: string, reset: boolean): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: 'reset',
    seed: 9,
    duration_s: 3,
    drain_timeout_s: 5,
    target: { base_url: baseUrl, api: 'chat', model: 'loadfleet-sim', timeout_s: 10, reset_cache_between_runs: reset },
    classes: [
      {
        name: 'rt',
        prompt: { input_tokens: 128, output_tokens: 4, cache: 'shared', shared_prefix_tokens: 96 },
        load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 3, rate_per_s: 3 }] },
      },
    ],
  };
}

async function sweep(baseUrl: string, reset: boolean, values: number[]): Promise<{ runs: any[]; rows: any[][] }> {
  const dir = tempDir();
  writePlan(dir, plan(baseUrl, reset));
  const file = join(dir, 'sweep.json');
  const doc = {
    schema: 'loadfleet.sweep/v1',
    name: 'reset',
    plan: 'plan.json',
    class: 'rt',
    scale: 'rate',
    stage_duration_s: 2,
    warmup_s: 0.5,
  };
  writeFileSync(file, JSON.stringify({ ...doc, strategy: { type: 'stages', values } }));
  const done = await startNode('coordinator/main.js', ['sweep', file, '--agents', '1', '--out', join(dir, 'out'), '--quiet']).done;
  expect(done.code, done.stderr).toBe(0);
  const [sweepDir] = readdirSync(join(dir, 'out'));
  const s = JSON.parse(readFileSync(join(dir, 'out', sweepDir!, 'sweep.json'), 'utf8'));
  const why = `${s.stop_rule}: ${s.stop_reason}; ${JSON.stringify(s.stages.map((st: any) => [st.value, st.verdict, st.reason]))}`;
  // Each value's first measurement (a stage the client limited is measured again, on a warmer cache).
  const firsts = s.stages.filter((st: any) => st.run_dir !== null && st.measurement === 1);
  expect(firsts, why).toHaveLength(values.length);
  return { runs: firsts.map((st: any) => readRunJson(st.run_dir)), rows: firsts.map((st: any) => readRequests(st.run_dir)) };
}

// A stage's requests in the order they were sent.
const bySend = (rows: any[]) => [...rows].sort((a, b) => (a.sent_unix_ns < b.sent_unix_ns ? -1 : 1));

describe('target.reset_cache_between_runs', () => {
  let sim: { baseUrl: string; stop(): void };
  beforeAll(async () => {
    sim = await startSim(['--enable-prefix-caching']);
  });
  afterAll(() => sim?.stop());

  it('starts every sweep stage on an empty prefix cache, and says so in each run.json', { timeout: 150_000 }, async () => {
    // Without the reset a sweep starts on the cache the last one left: its first stage (same seed,
    // so the same shared prefix) hits at once.
    const first = await sweep(sim.baseUrl, false, [2]);
    expect(first.runs[0].cache_reset).toMatchObject({ requested: false, endpoint: null });
    expect(bySend(first.rows[0]!)[0].cached_tokens).toBe(0);
    const warm = await sweep(sim.baseUrl, false, [2]);
    expect(bySend(warm.rows[0]!)[0].cached_tokens).toBe(96);
    // With it, every stage's first request computes the shared prefix again and the later ones hit its 6 blocks.
    const reset = await sweep(sim.baseUrl, true, [2, 3]);
    for (const [i, run] of reset.runs.entries()) {
      expect(run.cache_reset).toMatchObject({ requested: true, endpoint: '/reset_prefix_cache', http_status: 200 });
      expect(run.field_definitions.cache_reset).toMatch(/prefix cache was emptied/);
      const rows = bySend(reset.rows[i]!);
      expect(rows[0].cached_tokens).toBe(0);
      expect(rows.slice(2).every((r: any) => r.cached_tokens === 96)).toBe(true);
    }
    const metrics = await (await fetch(sim.baseUrl.replace(/\/v1$/, '/vllm/metrics'))).text();
    expect(metrics).toMatch(/loadfleet_sim_prefix_cache_resets_total\{[^}]*\} 2\n/);
  });
});
