// suite: timing
// End to end, the gate's calibration on engine-sim's vLLM model near saturation (2,048/128 tokens,
// Poisson 12 req/s): three runs differing only in their seed — the same offered distribution, the
// run-to-run variation a real server shows — compared pairwise must fail the gate no more often
// than the stated 5% allows (at most 1 of 3 pairs: the 99th percentile of Binomial(3, 0.05)), and a
// slower engine (a 2,048-token step budget, so every 2,048-token prompt is prefilled over two steps:
// TTFT p50 about +35–60%) compared with each of them must never pass: one run a side flags it, or
// says it cannot decide when the change does not clear the candidate's timing uncertainty and the
// run-to-run floor besides its interval (exit 7 with --undecided-exit 7). Never a single pair.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { binomialUpper99 } from '../results/compare/simulate.test-kit.js';
import { ExitCode } from '../shared/errors.js';
import type { Plan } from '../shared/plan.js';
import { onlyRunDir, runCoordinator, startNode, tempDir, writePlan } from './harness.js';

const work = tempDir();
const DURATION_S = 20;
const GATE = 'ttft_p50_ms,ttft_p95_ms,e2e_p95_ms,success_rate';

function plan(seed: number): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: 'aa',
    seed,
    duration_s: DURATION_S,
    drain_timeout_s: 10,
    classes: [
      {
        name: 'chat',
        prompt: { input_tokens: 2048, output_tokens: 128 },
        slo: { ttft_p95_ms: 2000, e2e_p95_ms: 10_000, success_rate_min: 0.99 },
        load: { model: 'poisson', phases: [{ start_s: 0, duration_s: DURATION_S, rate_per_s: 12 }] },
      },
    ],
  };
}

async function run(name: string, seed: number, simArgs: string[] = []): Promise<string> {
  const r = await runCoordinator([
    '--plan',
    writePlan(work, plan(seed), `${name}.json`),
    '--out',
    join(work, name),
    '--quiet',
    ...simArgs.map((a) => `--sim-arg=${a}`),
  ]);
  expect(r.code, r.stderr).toBe(ExitCode.OK);
  return onlyRunDir(join(work, name));
}

async function compare(b: string, c: string, name: string): Promise<{ code: number | null; c: any }> {
  const out = join(work, name);
  const r = await startNode('coordinator/main.js', [
    'compare',
    b,
    c,
    '--out',
    out,
    '--gate-on',
    GATE,
    '--allow-different-plans',
    '--fail-on-regression',
    '--undecided-exit',
    String(ExitCode.UNDECIDED),
  ]).done;
  expect([ExitCode.OK, ExitCode.REGRESSED, ExitCode.UNDECIDED], r.stderr).toContain(r.code);
  return { code: r.code, c: JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8')) };
}

const figure = (c: any, name: string) => c.classes.chat.all.find((f: any) => f.figure === name);

describe('compare calibration on engine-sim (vLLM model near saturation)', () => {
  const same: string[] = [];
  let slow = '';
  beforeAll(async () => {
    for (const seed of [1, 2, 3]) same.push(await run(`aa${seed}`, seed));
    slow = await run('slow', 4, ['--max-num-batched-tokens=2048']);
  }, 240_000);

  it('A/A: runs differing only in seed fail the gate no more than the stated 5% allows', async () => {
    const pairs = [
      [0, 1],
      [0, 2],
      [1, 2],
    ] as const;
    let failed = 0;
    for (const [i, j] of pairs) {
      const { code, c } = await compare(same[i]!, same[j]!, `aa-${i}${j}`);
      const p95 = figure(c, 'ttft_p95_ms');
      console.log(
        `A/A ${i}-${j}: exit ${code}; ttft p95 ${p95.baseline} → ${p95.candidate} [${p95.interval.low}, ${p95.interval.high}], detectable +${(p95.detectable_change_relative * 100).toFixed(1)}%; regressed ${c.regressed.join(', ') || 'none'}`,
      );
      expect(c.gating).toEqual(GATE.split(',').map((f) => `chat/all/${f}`));
      expect(c.limits[0]).toMatch(/^one run a side/);
      if (code === ExitCode.REGRESSED) failed++;
    }
    expect(failed).toBeLessThanOrEqual(binomialUpper99(pairs.length, 0.05));
  }, 60_000);

  it('A/B: a slower engine never passes the gate against any baseline: flagged, or it cannot decide', async () => {
    let flagged = 0;
    for (const [i, base] of same.entries()) {
      const { code, c } = await compare(base, slow, `ab-${i}`);
      const p50 = figure(c, 'ttft_p50_ms');
      console.log(
        `A/B ${i}: exit ${code}; ttft p50 ${p50.baseline} → ${p50.candidate} (${(p50.delta_relative * 100).toFixed(1)}%) [${p50.interval.low}, ${p50.interval.high}], worse bound ${p50.worse_bound}, margin ${p50.margin.total} (timing ${p50.margin.timing}); ${p50.verdict}`,
      );
      expect([ExitCode.REGRESSED, ExitCode.UNDECIDED]).toContain(code);
      expect(['regressed', 'undecided']).toContain(p50.verdict);
      if (code === ExitCode.REGRESSED && c.regressed.includes('chat/all/ttft_p50_ms')) flagged++;
    }
    console.log(`A/B: ${flagged} of ${same.length} flagged on ttft_p50_ms, the rest undecided`);
  }, 60_000);
});
