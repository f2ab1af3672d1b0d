// suite: timing
// End to end, the gate on the machine's own noise: ten runs of one small plan with the same seed
// against engine-sim (40 ms first token), all from one experiment process, every pair compared
// with the CLI's defaults (one run a side: interval + timing uncertainty + run-to-run floor),
// gating on TTFT p50 and p95 and e2e p95. At most 5% of the 45 pairs may exit 5. The same pairs
// through the gate without margins (floor 0, timing uncertainty ignored) are logged beside it, as
// what the margins absorb. LOADFLEET_SAME_SEED_S sets the run length (default 3 s).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gateExit } from '../results/compare/command.js';
import type { CompareOptions, RunSample } from '../results/compare/figures.js';
import { compareRuns } from '../results/compare/figures.js';
import { loadRun } from '../results/compare/load.js';
import { floorShares, RUN_TO_RUN_FLOOR_PCT } from '../results/compare/run-to-run-floor.js';
import { ExitCode } from '../shared/errors.js';
import type { Plan } from '../shared/plan.js';
import { startNode, tempDir, writePlan } from './harness.js';

const work = tempDir();
const DURATION_S = Number(process.env.LOADFLEET_SAME_SEED_S ?? 3);
const RUNS = 10;
const GATE = ['ttft_p50_ms', 'ttft_p95_ms', 'e2e_p95_ms'].map((f) => `rt/all/${f}`);

const plan: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'same-seed',
  seed: 7,
  duration_s: DURATION_S,
  drain_timeout_s: 5,
  classes: [
    {
      name: 'rt',
      prompt: { input_tokens: 16, output_tokens: 8 },
      slo: { ttft_p95_ms: 1000 },
      load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: DURATION_S, rate_per_s: 16 }] },
    },
  ],
};

/** The CLI's defaults (coordinator compare with --gate-on and nothing else). */
const CLI: CompareOptions = {
  confidence: 0.9,
  falseAlarm: 0.05,
  resamples: 1000,
  relativeThreshold: 0.05,
  successThreshold: 0.01,
  seed: '1',
  gateOn: GATE,
  runToRunFloor: floorShares(RUN_TO_RUN_FLOOR_PCT),
};

describe('the gate on ten same-seed runs of one plan (engine-sim)', () => {
  let runs: RunSample[] = [];
  beforeAll(async () => {
    writePlan(work, plan, 'plan.json');
    const experiment = {
      schema: 'loadfleet.experiment/v1',
      name: 'same-seed',
      business_question: 'How far apart are same-seed runs of one plan on this machine?',
      plan: 'plan.json',
      repeats: RUNS / 2,
      arms: [{ name: 'a' }, { name: 'b' }],
      compare: { metric: 'rt_all_p95_ttft_ms', baseline: 'a', treatment: 'b' },
    };
    const file = writePlan(work, experiment, 'same-seed.experiment.json');
    const r = await startNode('coordinator/main.js', ['experiment', file, '--out', join(work, 'out'), '--quiet', '--sim-arg=--ttft-ms=40'])
      .done;
    expect(r.code, r.stderr).toBe(ExitCode.OK);
    const [dir] = readdirSync(join(work, 'out'));
    const manifest = JSON.parse(readFileSync(join(work, 'out', dir!, 'manifest.json'), 'utf8'));
    runs = await Promise.all(manifest.runs.map((s: { run_dir: string }) => loadRun(join(work, 'out', dir!, s.run_dir))));
  }, 150_000);

  it('at most 5% of the 45 pairs fail the gate', () => {
    expect(runs).toHaveLength(RUNS);
    let failed = 0;
    let undecided = 0;
    let bare = 0;
    for (let i = 0; i < RUNS; i++)
      for (let j = i + 1; j < RUNS; j++) {
        const c = compareRuns([runs[i]!], [runs[j]!], CLI);
        const code = gateExit(c, ExitCode.UNDECIDED).code;
        if (code === ExitCode.REGRESSED) failed++;
        if (code === ExitCode.UNDECIDED) undecided++;
        if (code === ExitCode.REGRESSED) console.log(`pair ${i}-${j}: regressed ${c.regressed.join(', ')}`);
        // The same pair without margins: what the timing uncertainty and the floor absorb.
        const strip = (r: RunSample): RunSample => ({
          ...r,
          classes: { rt: Object.fromEntries(Object.entries(r.classes.rt!).map(([w, s]) => [w, { ...s, timingUncertaintyMs: null }])) },
        });
        if (compareRuns([strip(runs[i]!)], [strip(runs[j]!)], { ...CLI, runToRunFloor: 0 }).regressed.length > 0) bare++;
      }
    const p95 = runs.map((r) => {
      const s = Float64Array.from(r.classes.rt!.all!.series.ttft).sort();
      return s[Math.ceil(0.95 * s.length) - 1]!.toFixed(1);
    });
    const unc = runs.map((r) => r.classes.rt!.all!.timingUncertaintyMs?.toFixed(1));
    console.log(
      `${RUNS} same-seed runs of ${DURATION_S} s (${runs[0]!.classes.rt!.all!.requests} requests each): TTFT p95 ${p95.join(', ')} ms; timing uncertainty p99 ${unc.join(', ')} ms`,
    );
    console.log(
      `45 pairs: ${failed} regressed (exit 5), ${undecided} undecided, ${45 - failed - undecided} pass; without margins ${bare} regressed`,
    );
    expect(failed).toBeLessThanOrEqual(2); // 5% of 45
  });
});
