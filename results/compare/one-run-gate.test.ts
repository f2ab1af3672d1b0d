// One run a side: a gating figure regresses only beyond its interval, the stamps' timing
// uncertainty and the run-to-run floor; beyond the interval alone it is undecided, and
// --fail-on-regression exits --undecided-exit for it. A tool's interpolated percentile is shown,
// never gated; the bootstrap is refused too few replicates for Holm's strictest level.
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../shared/errors.js';
import { rngFromKey } from '../../shared/rng.js';
import { gateExit } from './command.js';
import type { CompareOptions, WindowSample } from './figures.js';
import { compareRuns, pointEstimate } from './figures.js';
import { minResamples, testChange } from './inference.js';
import { floorOf, floorShares, parseFloorPct, RUN_TO_RUN_FLOOR_PCT } from './run-to-run-floor.js';
import { logAr, runOf, windowOf } from './simulate.test-kit.js';

const OPTS: CompareOptions = {
  confidence: 0.9,
  falseAlarm: 0.05,
  resamples: 500,
  relativeThreshold: 0.02,
  successThreshold: 0.01,
  seed: 'g',
  gateOn: ['rt/all/ttft_p50_ms'],
};

const run = (id: string, scale: number, extra: Partial<WindowSample> = {}) =>
  runOf(id, { ...windowOf(logAr(2000, 0, rngFromKey(id), scale)), ...extra });
const p50 = (c: ReturnType<typeof compareRuns>) => c.classes.rt!.all!.find((f) => f.figure === 'ttft_p50_ms')!;

describe('one run a side', () => {
  it('a +8% change beyond its interval regresses without a floor, and is undecided within a 10% floor', () => {
    const base = run('a', 1);
    const cand = run('b', 1.08);
    const bare = compareRuns([base], [cand], OPTS);
    expect(p50(bare).interval!.low).toBeGreaterThan(0);
    expect(bare.regressed).toEqual(['rt/all/ttft_p50_ms']);
    const floored = compareRuns([base], [cand], { ...OPTS, runToRunFloor: 0.1 });
    const f = p50(floored);
    expect(f.verdict).toBe('undecided');
    expect(f.margin).toEqual({ timing: 0, run_to_run: expect.closeTo(10, 0), total: expect.closeTo(10, 0) });
    expect(f.p_worse).toBeLessThan(0.01);
    expect(f.p_worse_beyond_margin).toBeGreaterThan(0.5);
    expect(f.detectable_change!).toBeGreaterThan(f.margin!.total);
    expect(floored.undecided).toEqual(['rt/all/ttft_p50_ms']);
    expect(floored.regressed).toEqual([]);
    expect(gateExit(floored, ExitCode.OK).code).toBe(ExitCode.OK);
    expect(gateExit(floored, ExitCode.UNDECIDED)).toMatchObject({
      code: 7,
      line: expect.stringMatching(/cannot decide: rt\/all\/ttft_p50_ms/),
    });
  });

  it('a +30% change clears a 10% floor and the timing uncertainty, and regresses', () => {
    const c = compareRuns([run('a', 1, { timingUncertaintyMs: 2 })], [run('c', 1.3, { timingUncertaintyMs: 5 })], {
      ...OPTS,
      runToRunFloor: 0.1,
    });
    expect(p50(c).margin!.timing).toBe(5);
    expect(p50(c).verdict).toBe('regressed');
    expect(gateExit(c, ExitCode.UNDECIDED).code).toBe(ExitCode.REGRESSED);
  });

  it('the timing uncertainty alone can leave a change undecided', () => {
    const c = compareRuns([run('a', 1, { timingUncertaintyMs: 1 })], [run('b', 1.08, { timingUncertaintyMs: 30 })], OPTS);
    expect(p50(c).margin).toMatchObject({ timing: 30, run_to_run: 0 });
    expect(p50(c).verdict).toBe('undecided');
  });

  it("a regression clears the candidate's timing uncertainty, not the baseline's: late stamps only raise a figure", () => {
    const c = compareRuns([run('a', 1, { timingUncertaintyMs: 30 })], [run('b', 1.08, { timingUncertaintyMs: 1 })], OPTS);
    expect(p50(c).margin).toMatchObject({ timing: 1, run_to_run: 0 });
    expect(p50(c).verdict).toBe('regressed');
    // The other way round, the baseline's 30 ms keeps the improvement from counting; its 1 ms does not.
    const improvement = (u: number) =>
      p50(compareRuns([run('b', 1.08, { timingUncertaintyMs: u })], [run('a', 1, { timingUncertaintyMs: 30 })], OPTS)).verdict;
    expect([improvement(30), improvement(1)]).toEqual(['within_noise', 'improved']);
  });

  it('with repeats a side there is no margin: run-to-run variation is in the variance', () => {
    const c = compareRuns([run('a1', 1), run('a2', 1)], [run('b1', 1.08), run('b2', 1.08)], { ...OPTS, runToRunFloor: 0.1 });
    expect(c.method).toBe('two-level-repeats');
    expect(p50(c).margin).toBeNull();
  });

  it('prints the worse-side bound at Holm’s strictest level', () => {
    const c = compareRuns([run('a', 1)], [run('b', 1.08)], { ...OPTS, gateOn: ['rt/all/ttft_p50_ms', 'rt/all/ttft_p95_ms'] });
    const f = p50(c);
    // At 0.05 / 2 one-sided, the bound lies below the 90% interval's lower end (a one-sided 95% bound).
    expect(f.worse_bound!).toBeLessThan(f.interval!.low!);
    expect(f.worse_bound!).toBeGreaterThan(0);
  });
});

describe("a tool's interpolated percentile", () => {
  it('is shown, not gated', () => {
    const base = runOf('tool', {
      ...windowOf(new Float64Array(0)),
      fixed: { ttft_p50_ms: { value: 50, reason: null, approx: true } },
    });
    const c = compareRuns([base], [run('b', 1)], OPTS);
    const f = p50(c);
    expect(f).toMatchObject({ verdict: 'not_evaluable', baseline: 50, gating: true, p_worse: null });
    expect(f.reason).toMatch(/read between two of its tool's percentiles/);
    expect(f.delta).toBeCloseTo(f.candidate! - 50, 6);
    expect(c.regressed).toEqual([]);
    expect(c.limits.at(-1)).toMatch(/^gating figure rt\/all\/ttft_p50_ms is not evaluable/);
  });
});

describe('--resamples bounded by Holm', () => {
  it('needs gating / α replicates, so a certain regression reaches α / gating', () => {
    expect([minResamples(1, 0.05), minResamples(3, 0.05), minResamples(6, 0.05), minResamples(4, 0.01)]).toEqual([20, 60, 120, 400]);
    // A certain regression through the percentile bootstrap (+∞ replicates): p = 1 / (B + 1).
    for (const [m, B] of [
      [6, 120],
      [6, 100],
    ] as const) {
      const inf = { ...pointEstimate(Number.POSITIVE_INFINITY, B), variance: Number.POSITIVE_INFINITY };
      const t = testChange(pointEstimate(50, B), inf, 0.9);
      expect(t.pHigher).toBeCloseTo(1 / (B + 1), 12);
      expect(t.pHigher <= 0.05 / m).toBe(B >= minResamples(m, 0.05));
    }
  });
});

describe('only a worsening is undecided', () => {
  it('an improvement beyond its interval but within the margin is within noise, and does not stop the gate', () => {
    const c = compareRuns([run('b', 1.08)], [run('a', 1)], { ...OPTS, runToRunFloor: 0.1 });
    expect(p50(c).verdict).toBe('within_noise');
    expect(c.undecided).toEqual([]);
    expect(gateExit(c, ExitCode.UNDECIDED).code).toBe(ExitCode.OK);
  });
});

describe('the run-to-run floor by percentile level', () => {
  it('reads one number for every level, or the levels named', () => {
    expect(parseFloorPct('10')).toEqual({ floor: { p50: 10, p95: 10, p99: 10 }, problem: null });
    expect(parseFloorPct('p95=50')).toEqual({ floor: { ...RUN_TO_RUN_FLOOR_PCT, p95: 50 }, problem: null });
    expect(parseFloorPct('p90=5').problem).toMatch(/^--run-to-run-floor-pct p90=5: expected a percentage, or p50=…/);
    expect(parseFloorPct('-1').problem).toMatch(/must be >= 0/);
  });

  it("applies each figure's level: a +20% p95 change is undecided under a 35% p95 floor while the p50's 5% lets a +20% p50 change through", () => {
    expect([floorOf(RUN_TO_RUN_FLOOR_PCT, 'ttft_p95_ms'), floorOf(RUN_TO_RUN_FLOOR_PCT, 'goodput_rps')]).toEqual([35, 5]);
    const c = compareRuns([run('a', 1)], [run('b', 1.2)], {
      ...OPTS,
      gateOn: ['rt/all/ttft_p50_ms', 'rt/all/ttft_p95_ms'],
      runToRunFloor: floorShares(RUN_TO_RUN_FLOOR_PCT),
    });
    expect(c.regressed).toEqual(['rt/all/ttft_p50_ms']);
    expect(c.undecided).toEqual(['rt/all/ttft_p95_ms']);
  });
});
