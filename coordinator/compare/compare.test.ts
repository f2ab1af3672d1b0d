import { describe, expect, it } from 'vitest';
import { rngFromKey } from '../../shared/rng.js';
import { differenceInterval, nearestRank, resampledCounts, resampledMeans, resampledQuantiles } from './bootstrap.js';
import { comparabilityProblems, comparisonTable } from './command.js';
import type { CompareOptions, RunSample, WindowSample } from './figures.js';
import { compareRuns } from './figures.js';
import { cdfPoints } from './page.js';
import { changeVerdict } from './verdict.js';

const OPTS: CompareOptions = { confidence: 0.95, resamples: 1000, relativeThreshold: 0.05, successThreshold: 0.01, seed: 't' };

/** n values spread evenly over [center − spread, center + spread], sorted. */
function spread(n: number, center: number, width: number): Float64Array {
  return Float64Array.from({ length: n }, (_, i) => center - width + (2 * width * i) / (n - 1));
}

function sample(ttftMs: number, over: Partial<WindowSample> = {}): WindowSample {
  return {
    values: { ttft: spread(200, ttftMs, 10), tpot: spread(200, 5, 1), e2e: spread(200, ttftMs + 100, 20) },
    requests: 200,
    completed: 200,
    good: 200,
    goodputRps: 20,
    itl: { itl_p50_ms: 5, itl_p95_ms: 6, itl_p99_ms: 7 },
    ...over,
  };
}

function run(id: string, w: WindowSample, plan = 'p'): RunSample {
  return { runId: id, planSha256: plan, scheduleSha256: 's', classes: { rt: { all: w } } };
}

const fig = (c: ReturnType<typeof compareRuns>, name: string) => c.classes.rt!.all!.find((f) => f.figure === name)!;

describe('bootstrap', () => {
  it('reads nearest ranks as run.json does', () => {
    const s = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect([nearestRank(s, 0.5), nearestRank(s, 0.95), nearestRank(s, 0.99), nearestRank([], 0.5)]).toEqual([5, 10, 10, null]);
  });

  it('resamples quantiles by counting drawn indices exactly as sorting each resample would', () => {
    const sorted = Float64Array.from([3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377]);
    const fast = resampledQuantiles(sorted, [0.5, 0.95], 50, rngFromKey('x'));
    const rng = rngFromKey('x');
    for (let b = 0; b < 50; b++) {
      const draw = Float64Array.from({ length: sorted.length }, () => sorted[Math.floor(rng.next() * sorted.length)]!).sort();
      expect([fast[0]![b], fast[1]![b]]).toEqual([nearestRank(draw, 0.5), nearestRank(draw, 0.95)]);
    }
  });

  it('gives an interval around the true difference, and the same one for the same seed', () => {
    const b = resampledMeans([10, 11, 12], 2000, rngFromKey('b'));
    const c = resampledMeans([20, 21, 22], 2000, rngFromKey('c'));
    const i = differenceInterval(b, c, 0.95);
    expect(i.low).toBeGreaterThan(8);
    expect(i.high).toBeLessThan(12);
    expect(differenceInterval(resampledMeans([10, 11, 12], 2000, rngFromKey('b')), c, 0.95)).toEqual(i);
    const counts = resampledCounts(90, 100, 2000, rngFromKey('k'));
    const m = counts.reduce((s, x) => s + x, 0) / counts.length;
    expect(Math.abs(m - 90)).toBeLessThan(0.5);
  });
});

describe('change verdicts', () => {
  const rel = { kind: 'relative', value: 0.05 } as const;
  it('regressed only beyond noise and threshold, on the worse side', () => {
    expect(changeVerdict(50, 30, { low: 25, high: 35 }, 'lower', rel)).toBe('regressed');
    expect(changeVerdict(50, -30, { low: -35, high: -25 }, 'lower', rel)).toBe('improved');
    expect(changeVerdict(50, 30, { low: -1, high: 60 }, 'lower', rel)).toBe('within_noise'); // interval holds 0
    expect(changeVerdict(50, 2, { low: 1, high: 3 }, 'lower', rel)).toBe('within_noise'); // beyond noise, below 5%
    expect(changeVerdict(0.99, -0.05, { low: -0.07, high: -0.03 }, 'higher', { kind: 'absolute', value: 0.01 })).toBe('regressed');
    expect(changeVerdict(null, null, null, 'lower', rel)).toBe('not_evaluable');
  });
});

describe('compareRuns', () => {
  it('reports a TTFT regression of 50 → 80 ms with an interval that excludes zero', () => {
    const c = compareRuns([run('a', sample(50))], [run('b', sample(80))], OPTS);
    expect(c.method).toBe('bootstrap-over-requests');
    const p95 = fig(c, 'ttft_p95_ms');
    expect(p95).toMatchObject({ verdict: 'regressed', baseline: expect.closeTo(59, 0), candidate: expect.closeTo(89, 0) });
    expect(p95.interval!.low).toBeGreaterThan(0);
    expect(c.regressed).toContain('rt/all/ttft_p95_ms');
    expect(fig(c, 'tpot_p95_ms').verdict).toBe('within_noise');
    // ITL has no per-request values: no interval over requests, and it says why.
    expect(fig(c, 'itl_p95_ms')).toMatchObject({
      verdict: 'not_evaluable',
      interval: null,
      reason: expect.stringMatching(/ITL gaps are not recorded/),
    });
  });

  it('finds identical runs within noise, every interval holding zero', () => {
    const c = compareRuns([run('a', sample(50))], [run('b', sample(50))], OPTS);
    expect(c.regressed).toEqual([]);
    expect(c.improved).toEqual([]);
    for (const f of c.classes.rt!.all!.filter((x) => x.interval !== null)) {
      expect(f.verdict, f.figure).toBe('within_noise');
      expect(f.interval!.low, f.figure).toBeLessThanOrEqual(0);
      expect(f.interval!.high, f.figure).toBeGreaterThanOrEqual(0);
    }
  });

  it('judges success rate in points and goodput relatively, higher being better', () => {
    const c = compareRuns([run('a', sample(50))], [run('b', sample(50, { completed: 180, good: 180, goodputRps: 18 }))], OPTS);
    expect(fig(c, 'success_rate')).toMatchObject({ baseline: 1, candidate: 0.9, verdict: 'regressed' });
    expect(fig(c, 'goodput_rps')).toMatchObject({ baseline: 20, candidate: 18, verdict: 'regressed' });
    const none = compareRuns([run('a', sample(50, { good: null, goodputRps: null }))], [run('b', sample(50))], OPTS);
    expect(fig(none, 'goodput_rps')).toMatchObject({ verdict: 'not_evaluable', reason: expect.stringMatching(/needs an SLO/) });
  });

  it('bootstraps over repeats when each side has 2 or more runs, ITL included', () => {
    const b = [run('a1', sample(50)), run('a2', sample(52)), run('a3', sample(51))];
    const c = [
      run('b1', sample(80, { itl: { itl_p50_ms: 9, itl_p95_ms: 10, itl_p99_ms: 11 } })),
      run('b2', sample(82, { itl: { itl_p50_ms: 9, itl_p95_ms: 10, itl_p99_ms: 11 } })),
    ];
    const cmp = compareRuns(b, c, OPTS);
    expect(cmp.method).toBe('bootstrap-over-repeats');
    expect(fig(cmp, 'ttft_p50_ms').verdict).toBe('regressed');
    expect(fig(cmp, 'itl_p95_ms')).toMatchObject({ baseline: 6, candidate: 10, verdict: 'regressed' });
    // TTFT and e2e p50/p95/p99 (+30 ms) and ITL p50/p95/p99 (+4 ms); TPOT, success and goodput unchanged.
    expect(comparisonTable(cmp, 0.95)[0]).toBe('compare (bootstrap-over-repeats, 95% intervals): 9 regressed, 0 improved');
  });

  it('names what makes two sides not comparable', () => {
    expect(comparabilityProblems([run('a', sample(1))], [run('b', sample(1))])).toEqual([]);
    expect(comparabilityProblems([run('a', sample(1), 'p1')], [run('b', sample(1), 'p2')])[0]).toMatch(/^the runs ran 2 different plans/);
  });

  it('draws at most about 200 CDF points ending at 1', () => {
    const pts = cdfPoints(spread(1000, 50, 10));
    expect(pts.length).toBeLessThanOrEqual(201);
    expect(pts.at(-1)).toEqual([60, 1]);
  });
});
