import { describe, expect, it } from 'vitest';
import type { Plan } from '../../shared/plan.js';
import { rngFromKey } from '../../shared/rng.js';
import { comparabilityProblems, comparisonJson, comparisonTable } from './command.js';
import type { CompareOptions, RunSample } from './figures.js';
import { compareRuns } from './figures.js';
import { parseGateOn } from './gate-on.js';
import { loadSha256 } from './load.js';
import { cdfPoints } from './page.js';
import { logAr, runOf, windowOf } from './simulate.test-kit.js';
import { changeVerdict } from './verdict.js';

const OPTS: CompareOptions = {
  confidence: 0.95,
  falseAlarm: 0.05,
  resamples: 500,
  relativeThreshold: 0.05,
  successThreshold: 0.01,
  seed: 't',
};

/** A run of n independent TTFTs around 100·scale ms, drawn from its own seed. */
const iidRun = (id: string, scale = 1, n = 400, failed: number[] = []) => runOf(id, windowOf(logAr(n, 0, rngFromKey(id), scale), failed));

const fig = (c: ReturnType<typeof compareRuns>, name: string) => c.classes.rt!.all!.find((f) => f.figure === name)!;

describe('change verdicts', () => {
  const rel = { kind: 'relative', value: 0.05 } as const;
  it('regressed only beyond noise and threshold, on the worse side', () => {
    expect(changeVerdict(50, 30, { worse: true, better: false }, rel)).toBe('regressed');
    expect(changeVerdict(50, -30, { worse: false, better: true }, rel)).toBe('improved');
    expect(changeVerdict(50, 30, { worse: false, better: false }, rel)).toBe('within_noise');
    expect(changeVerdict(50, 2, { worse: true, better: false }, rel)).toBe('within_noise'); // beyond noise, below 5%
    expect(changeVerdict(0.99, -0.05, { worse: true, better: false }, { kind: 'absolute', value: 0.01 })).toBe('regressed');
    expect(changeVerdict(null, null, { worse: false, better: false }, rel)).toBe('not_evaluable');
    expect(changeVerdict(Number.POSITIVE_INFINITY, null, { worse: false, better: false }, rel)).toBe('within_noise'); // +∞ both sides
  });
});

describe('compareRuns', () => {
  it('flags a +30% TTFT regression on the gating SLO figures, states what it could detect, and reports the rest without gating', () => {
    const c = compareRuns([iidRun('a')], [iidRun('b', 1.3)], OPTS);
    expect(c.method).toBe('block-bootstrap-one-run');
    expect(c.gating.sort()).toEqual(['rt/all/e2e_p95_ms', 'rt/all/success_rate', 'rt/all/ttft_p95_ms']);
    const p95 = fig(c, 'ttft_p95_ms');
    expect(p95).toMatchObject({ gating: true, verdict: 'regressed' });
    expect(p95.interval!.low).toBeGreaterThan(0);
    expect(p95.p_worse_adjusted).toBeLessThan(0.05);
    expect(p95.detectable_change_relative).toBeGreaterThan(0.05);
    expect(p95.detectable_change_relative).toBeLessThan(0.3);
    expect(c.regressed).toContain('rt/all/ttft_p95_ms');
    // p50 moved too, but it does not gate: reported only.
    expect(fig(c, 'ttft_p50_ms')).toMatchObject({ gating: false, verdict: 'regressed', detectable_change: null, p_worse_adjusted: null });
    expect(c.reported.regressed).toContain('rt/all/ttft_p50_ms');
    expect(c.regressed).not.toContain('rt/all/ttft_p50_ms');
    expect(c.limits[0]).toMatch(/^one run a side: .*not run-to-run variation/);
    expect(fig(c, 'itl_p95_ms')).toMatchObject({ verdict: 'not_evaluable', reason: expect.stringMatching(/ITL gaps are not recorded/) });
  });

  it('finds two runs of one process within noise on every gating figure', () => {
    const c = compareRuns([iidRun('a')], [iidRun('b')], OPTS);
    for (const key of c.gating) expect(c.regressed, key).not.toContain(key);
    expect(fig(c, 'ttft_p95_ms').block_len!.baseline).toBeGreaterThanOrEqual(1);
  });

  it('ranks failures +∞: 10% failed on the candidate makes its p95 +∞ and a gating regression, not a figure over successes', () => {
    const failed = Array.from({ length: 40 }, (_, i) => i * 10);
    const c = compareRuns([iidRun('a')], [iidRun('b', 1, 400, failed)], OPTS);
    const p95 = fig(c, 'ttft_p95_ms');
    expect(p95).toMatchObject({ candidate: null, failures_decide: ['candidate'], verdict: 'regressed' });
    expect(p95.interval!.high).toBeNull(); // unbounded
    expect(fig(c, 'ttft_p50_ms')).toMatchObject({ failures_decide: [], verdict: 'within_noise' });
    expect(fig(c, 'success_rate')).toMatchObject({ baseline: 1, candidate: 0.9, verdict: 'regressed' });
  });

  it('with repeats, uses the runs then blocks within them, and says nothing of one run a side', () => {
    const b = ['a1', 'a2', 'a3'].map((id) => iidRun(id));
    const c = ['b1', 'b2', 'b3'].map((id) => iidRun(id, 1.5));
    const cmp = compareRuns(b, c, OPTS);
    expect(cmp.method).toBe('two-level-repeats');
    expect(fig(cmp, 'ttft_p95_ms').verdict).toBe('regressed');
    expect(cmp.limits).toEqual([]);
  });

  it('gates on what --gate-on names instead of the SLO figures, and says when one of them cannot gate', () => {
    const c = compareRuns([iidRun('a')], [iidRun('b', 1.3)], { ...OPTS, gateOn: ['rt/all/ttft_p50_ms', 'rt/all/itl_p95_ms'] });
    expect(c.gating).toEqual(['rt/all/ttft_p50_ms', 'rt/all/itl_p95_ms']);
    expect(c.regressed).toEqual(['rt/all/ttft_p50_ms']);
    expect(c.reported.regressed).toContain('rt/all/ttft_p95_ms');
    expect(c.limits.at(-1)).toMatch(/^gating figure rt\/all\/itl_p95_ms is not evaluable and gates nothing: ITL gaps/);
  });

  it('prints gating figures marked, with their detectable change, and the limits', () => {
    const lines = comparisonTable(compareRuns([iidRun('a')], [iidRun('b', 1.3)], OPTS), 0.95, 0.05);
    expect(lines[0]).toMatch(
      /^compare \(block-bootstrap-one-run, 95% two-sided intervals: each end a one-sided 97.5% bound\): gating 3 figure\(s\) one-sided at a family-wise false-alarm rate of 5% \(Holm\): \d regressed/,
    );
    expect(lines.find((l) => /ttft_p95_ms +\*/.test(l))).toMatch(/REGRESSED {2}detectable ≥ [\d.]+ \(\+\d+\.\d%\)$/);
    expect(lines.at(-1)).toMatch(/^ {2}note: one run a side/);
  });

  it('defines every field of comparison.json', () => {
    const c = compareRuns([iidRun('a')], [iidRun('b', 1.3)], OPTS);
    const side = { label: 'x', runs: [], dirs: [] };
    const json = comparisonJson(c, side, side, { ...OPTS }, []);
    const defined = new Set(Object.keys(json.definitions));
    const missing = [
      ...Object.keys(json).filter((k) => k !== 'definitions' && !defined.has(k)),
      ...Object.keys(c.classes.rt!.all![0]!)
        .map((k) => `classes.<c>.<w>[].${k}`)
        .filter((k) => !defined.has(k)),
    ];
    expect(missing).toEqual([]);
  });

  it('names what makes two sides not comparable', () => {
    const run = (id: string, plan: string): RunSample => ({ ...iidRun(id), planSha256: plan });
    expect(comparabilityProblems([run('a', 'p')], [run('b', 'p')])).toEqual([]);
    expect(comparabilityProblems([run('a', 'p1')], [run('b', 'p2')])[0]).toMatch(/^the runs ran 2 different plans/);
  });

  it('draws at most about 200 CDF points ending at 1', () => {
    const pts = cdfPoints(Float64Array.from({ length: 1000 }, (_, i) => 40 + (20 * i) / 999));
    expect(pts.length).toBeLessThanOrEqual(201);
    expect(pts.at(-1)).toEqual([60, 1]);
  });
});

describe('--gate-on', () => {
  const classes = { rt: ['all', 'steady'], batch: ['all'] };
  it('reads figure, class/figure and class/window/figure', () => {
    expect(parseGateOn('ttft_p95_ms', classes).keys).toEqual(['rt/all/ttft_p95_ms', 'batch/all/ttft_p95_ms']);
    expect(parseGateOn('rt/steady/e2e_p99_ms, batch/success_rate', classes).keys).toEqual([
      'rt/steady/e2e_p99_ms',
      'batch/all/success_rate',
    ]);
  });
  it('names the problems', () => {
    expect(parseGateOn('ttft_p97_ms,web/ttft_p95_ms,batch/steady/ttft_p95_ms', classes).problems).toEqual([
      expect.stringMatching(/^--gate-on ttft_p97_ms: expected figure/),
      '--gate-on web/ttft_p95_ms: no class web (classes: rt, batch)',
      '--gate-on batch/steady/ttft_p95_ms: class batch has no window steady (windows: all)',
    ]);
  });
});

describe('the load a plan offers (loadSha256)', () => {
  const plan = {
    schema: 'loadfleet.plan/v1',
    name: 'p',
    seed: 1,
    duration_s: 5,
    classes: [{ name: 'c', prompt: { input_tokens: 10, output_tokens: 5 }, load: { model: 'poisson', phases: [] } }],
  } as unknown as Plan;
  it('leaves out the target, the price and where spans are received; keeps whether spans are traced', () => {
    const base = loadSha256(plan);
    expect(loadSha256({ ...plan, target: { base_url: 'http://elsewhere/v1' } } as Plan)).toBe(base);
    expect(loadSha256({ ...plan, cost: { usd_per_hour: 10 } } as Plan)).toBe(base);
    const traced = loadSha256({ ...plan, traces: { http: '127.0.0.1:0' } } as Plan);
    expect(traced).not.toBe(base);
    expect(loadSha256({ ...plan, traces: { http: '0.0.0.0:4318', grpc: '0.0.0.0:4317' } } as Plan)).toBe(traced);
    expect(loadSha256({ ...plan, seed: 2 })).not.toBe(base);
  });
});
