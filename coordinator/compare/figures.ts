// Pure: the comparison of a baseline and a candidate (each one run, or the repeats of an experiment
// arm), per class and window: the change of each figure with its bootstrap interval and verdict.
import { rngFromKey } from '../../shared/rng.js';
import type { Interval } from './bootstrap.js';
import { differenceInterval, mean, nearestRank, resampledCounts, resampledMeans, resampledQuantiles } from './bootstrap.js';
import type { Better, ChangeVerdict, Threshold } from './verdict.js';
import { changeVerdict } from './verdict.js';

/** Metrics whose per-request values requests.ndjson gives (ITL gaps are only in the histograms). */
export const REQUEST_METRICS = ['ttft', 'tpot', 'e2e'] as const;
export type RequestMetric = (typeof REQUEST_METRICS)[number];
export const LATENCY_FIGURE_METRICS = ['ttft', 'tpot', 'itl', 'e2e'] as const;
export const COMPARED_QUANTILES = [0.5, 0.95, 0.99] as const;

/** One class in one window of one run. */
export interface WindowSample {
  /** Per-request values in ms of successful requests, sorted ascending. */
  values: Record<RequestMetric, Float64Array>;
  requests: number;
  completed: number;
  /** Requests counted as goodput (run.json's definition); null when the class declares no SLO. */
  good: number | null;
  goodputRps: number | null;
  /** run.json's ITL percentiles (ms) of the window, keyed itl_p50_ms …; the histograms' figures. */
  itl: Record<string, number | null>;
}

/** What a comparison reads of one run. */
export interface RunSample {
  runId: string;
  /** SHA-256 of the plan's load, without its target (load.ts loadSha256). */
  planSha256: string;
  scheduleSha256: string;
  /** class → window → sample. */
  classes: Record<string, Record<string, WindowSample>>;
}

/** One compared figure. */
export interface FigureChange {
  figure: string;
  unit: 'ms' | 'share' | 'req/s';
  better: Better;
  baseline: number | null;
  candidate: number | null;
  /** candidate − baseline, in the figure's unit. */
  delta: number | null;
  /** delta / baseline (null when the baseline is 0 or absent). */
  delta_relative: number | null;
  /** The bootstrap interval of delta at the comparison's confidence; null when none could be formed. */
  interval: Interval | null;
  verdict: ChangeVerdict;
  /** Why not_evaluable (null otherwise). */
  reason: string | null;
}

export interface CompareOptions {
  confidence: number;
  resamples: number;
  /** Relative threshold for latency and goodput figures (0.05 = 5%). */
  relativeThreshold: number;
  /** Absolute threshold for the success rate (0.01 = 1 point). */
  successThreshold: number;
  seed: string;
}

export type CompareMethod = 'bootstrap-over-repeats' | 'bootstrap-over-requests';

export interface Comparison {
  method: CompareMethod;
  baseline_runs: string[];
  candidate_runs: string[];
  classes: Record<string, Record<string, FigureChange[]>>;
  regressed: string[];
  improved: string[];
}

/** Repeats when each side has at least 2 runs; otherwise the requests of each side, pooled. */
export function compareMethod(baseline: readonly RunSample[], candidate: readonly RunSample[]): CompareMethod {
  return baseline.length >= 2 && candidate.length >= 2 ? 'bootstrap-over-repeats' : 'bootstrap-over-requests';
}

/** The whole comparison, over the classes and windows both sides have. */
export function compareRuns(baseline: readonly RunSample[], candidate: readonly RunSample[], o: CompareOptions): Comparison {
  const method = compareMethod(baseline, candidate);
  const classes: Comparison['classes'] = {};
  const regressed: string[] = [];
  const improved: string[] = [];
  for (const cls of Object.keys(baseline[0]?.classes ?? {})) {
    if (!candidate.every((r) => r.classes[cls]) || !baseline.every((r) => r.classes[cls])) continue;
    classes[cls] = {};
    for (const w of Object.keys(baseline[0]!.classes[cls]!)) {
      const b = baseline.map((r) => r.classes[cls]![w]).filter((x): x is WindowSample => x !== undefined);
      const c = candidate.map((r) => r.classes[cls]![w]).filter((x): x is WindowSample => x !== undefined);
      if (b.length !== baseline.length || c.length !== candidate.length) continue;
      const figures = compareWindow(b, c, method, o, `${o.seed}:${cls}:${w}`);
      classes[cls]![w] = figures;
      for (const f of figures) {
        const where = `${cls}/${w}/${f.figure}`;
        if (f.verdict === 'regressed') regressed.push(where);
        if (f.verdict === 'improved') improved.push(where);
      }
    }
  }
  return {
    method,
    baseline_runs: baseline.map((r) => r.runId),
    candidate_runs: candidate.map((r) => r.runId),
    classes,
    regressed,
    improved,
  };
}

/** Every figure of one class and window. */
export function compareWindow(
  b: readonly WindowSample[],
  c: readonly WindowSample[],
  method: CompareMethod,
  o: CompareOptions,
  key: string,
): FigureChange[] {
  const rel: Threshold = { kind: 'relative', value: o.relativeThreshold };
  const out: FigureChange[] = [];
  for (const m of LATENCY_FIGURE_METRICS) {
    for (const q of COMPARED_QUANTILES) {
      const figure = `${m}_p${Math.round(q * 100)}_ms`;
      if (m === 'itl') out.push(itlChange(figure, b, c, method, o, `${key}:${figure}`));
      else out.push(latencyChange(figure, m, q, b, c, method, o, `${key}:${figure}`));
    }
  }
  out.push(successChange(b, c, method, o, `${key}:success_rate`));
  out.push(goodputChange(b, c, method, o, `${key}:goodput_rps`, rel));
  return out;
}

function change(
  figure: string,
  unit: FigureChange['unit'],
  better: Better,
  base: number | null,
  cand: number | null,
  interval: Interval | null,
  threshold: Threshold,
  reason: string | null,
): FigureChange {
  const delta = base === null || cand === null ? null : cand - base;
  const verdict = reason !== null ? 'not_evaluable' : changeVerdict(base, delta, interval, better, threshold);
  return {
    figure,
    unit,
    better,
    baseline: round(base),
    candidate: round(cand),
    delta: round(delta),
    delta_relative: delta === null || !base ? null : round(delta / base),
    interval: interval && { low: round(interval.low)!, high: round(interval.high)! },
    verdict,
    reason: verdict === 'not_evaluable' ? (reason ?? 'a side has no value for the figure') : null,
  };
}

function pooled(sides: readonly WindowSample[], m: RequestMetric): Float64Array {
  const n = sides.reduce((s, w) => s + w.values[m].length, 0);
  const all = new Float64Array(n);
  let at = 0;
  for (const w of sides) {
    all.set(w.values[m], at);
    at += w.values[m].length;
  }
  return sides.length > 1 ? all.sort() : all;
}

function latencyChange(
  figure: string,
  m: RequestMetric,
  q: number,
  b: readonly WindowSample[],
  c: readonly WindowSample[],
  method: CompareMethod,
  o: CompareOptions,
  key: string,
): FigureChange {
  const rel: Threshold = { kind: 'relative', value: o.relativeThreshold };
  if (method === 'bootstrap-over-repeats') {
    const bv = b.map((w) => nearestRank(w.values[m], q));
    const cv = c.map((w) => nearestRank(w.values[m], q));
    if (bv.includes(null) || cv.includes(null))
      return change(figure, 'ms', 'lower', null, null, null, rel, `a run has no successful request with ${m}`);
    return repeatsChange(figure, 'ms', 'lower', bv as number[], cv as number[], o, key, rel);
  }
  const bs = pooled(b, m);
  const cs = pooled(c, m);
  const base = nearestRank(bs, q);
  const cand = nearestRank(cs, q);
  if (base === null || cand === null)
    return change(figure, 'ms', 'lower', base, cand, null, rel, `a side has no successful request with ${m}`);
  const rb = resampledQuantiles(bs, [q], o.resamples, rngFromKey(`${key}:b`))[0]!;
  const rc = resampledQuantiles(cs, [q], o.resamples, rngFromKey(`${key}:c`))[0]!;
  return change(figure, 'ms', 'lower', base, cand, differenceInterval(rb, rc, o.confidence), rel, null);
}

function repeatsChange(
  figure: string,
  unit: FigureChange['unit'],
  better: Better,
  bv: number[],
  cv: number[],
  o: CompareOptions,
  key: string,
  threshold: Threshold,
): FigureChange {
  const rb = resampledMeans(bv, o.resamples, rngFromKey(`${key}:b`));
  const rc = resampledMeans(cv, o.resamples, rngFromKey(`${key}:c`));
  return change(figure, unit, better, mean(bv), mean(cv), differenceInterval(rb, rc, o.confidence), threshold, null);
}

function itlChange(
  figure: string,
  b: readonly WindowSample[],
  c: readonly WindowSample[],
  method: CompareMethod,
  o: CompareOptions,
  key: string,
): FigureChange {
  const rel: Threshold = { kind: 'relative', value: o.relativeThreshold };
  const bv = b.map((w) => w.itl[figure] ?? null);
  const cv = c.map((w) => w.itl[figure] ?? null);
  if (bv.includes(null) || cv.includes(null)) return change(figure, 'ms', 'lower', null, null, null, rel, 'a run has no ITL figure');
  if (method === 'bootstrap-over-repeats') return repeatsChange(figure, 'ms', 'lower', bv as number[], cv as number[], o, key, rel);
  return change(
    figure,
    'ms',
    'lower',
    mean(bv as number[]),
    mean(cv as number[]),
    null,
    rel,
    'ITL gaps are not recorded per request (only in the histograms), so no interval over requests can be formed; compare experiments with 2 or more repeats a side for an ITL verdict',
  );
}

function successChange(
  b: readonly WindowSample[],
  c: readonly WindowSample[],
  method: CompareMethod,
  o: CompareOptions,
  key: string,
): FigureChange {
  const t: Threshold = { kind: 'absolute', value: o.successThreshold };
  const rate = (w: WindowSample): number | null => (w.requests > 0 ? w.completed / w.requests : null);
  if (method === 'bootstrap-over-repeats') {
    const bv = b.map(rate);
    const cv = c.map(rate);
    if (bv.includes(null) || cv.includes(null))
      return change('success_rate', 'share', 'higher', null, null, null, t, 'a run has no request in the window');
    return repeatsChange('success_rate', 'share', 'higher', bv as number[], cv as number[], o, key, t);
  }
  const sum = (s: readonly WindowSample[], k: 'requests' | 'completed') => s.reduce((a, w) => a + w[k], 0);
  const [bn, bk, cn, ck] = [sum(b, 'requests'), sum(b, 'completed'), sum(c, 'requests'), sum(c, 'completed')];
  if (bn === 0 || cn === 0) return change('success_rate', 'share', 'higher', null, null, null, t, 'a side has no request in the window');
  const rb = resampledCounts(bk, bn, o.resamples, rngFromKey(`${key}:b`)).map((x) => x / bn);
  const rc = resampledCounts(ck, cn, o.resamples, rngFromKey(`${key}:c`)).map((x) => x / cn);
  return change('success_rate', 'share', 'higher', bk / bn, ck / cn, differenceInterval(rb, rc, o.confidence), t, null);
}

function goodputChange(
  b: readonly WindowSample[],
  c: readonly WindowSample[],
  method: CompareMethod,
  o: CompareOptions,
  key: string,
  t: Threshold,
): FigureChange {
  const bv = b.map((w) => w.goodputRps);
  const cv = c.map((w) => w.goodputRps);
  if (bv.includes(null) || cv.includes(null))
    return change(
      'goodput_rps',
      'req/s',
      'higher',
      null,
      null,
      null,
      t,
      'goodput needs an SLO: the class declares none on a side (or the window has no length)',
    );
  if (method === 'bootstrap-over-repeats')
    return repeatsChange('goodput_rps', 'req/s', 'higher', bv as number[], cv as number[], o, key, t);
  // Over requests: the window length is fixed, so goodput scales with the resampled count of good requests.
  const side = (s: readonly WindowSample[], tag: string): { point: number; reps: Float64Array } => {
    const n = s.reduce((a, w) => a + w.requests, 0);
    const good = s.reduce((a, w) => a + (w.good ?? 0), 0);
    const point = mean(s.map((w) => w.goodputRps!));
    const reps = resampledCounts(good, n, o.resamples, rngFromKey(`${key}:${tag}`)).map((x) => (good === 0 ? 0 : (point * x) / good));
    return { point, reps };
  };
  const bs = side(b, 'b');
  const cs = side(c, 'c');
  return change('goodput_rps', 'req/s', 'higher', bs.point, cs.point, differenceInterval(bs.reps, cs.reps, o.confidence), t, null);
}

function round(x: number | null): number | null {
  return x === null ? null : Math.round(x * 1e6) / 1e6;
}

/** One sentence per field of comparison.json. */
export const COMPARISON_DEFINITIONS: Record<string, string> = {
  method:
    "bootstrap-over-repeats when each side holds 2 or more runs (an experiment arm's repeats): each side's per-run figures are resampled with replacement and averaged, the change is the difference of the averages; bootstrap-over-requests otherwise: each side's successful requests (pooled over its runs) are resampled with replacement at their own count and the figure recomputed",
  confidence: 'the coverage of every interval (0.95: the 2.5% and 97.5% quantiles of the resampled changes)',
  resamples:
    'bootstrap replicates per figure and side, from a generator seeded by seed, class, window and figure (the same inputs give the same intervals)',
  'classes.<c>.<w>[].baseline':
    "the figure on the baseline side: for latency, the exact nearest-rank percentile in ms over successful requests of the window (by intended send time) from requests.ndjson (ITL: run.json's histogram percentile, as ITL gaps are not recorded per request); success_rate = completed / requests; goodput_rps as run.json defines it; with repeats, the mean over runs",
  'classes.<c>.<w>[].candidate': 'the same figure on the candidate side',
  'classes.<c>.<w>[].delta': "candidate − baseline, in the figure's unit",
  'classes.<c>.<w>[].delta_relative': 'delta / baseline (null when the baseline is 0)',
  'classes.<c>.<w>[].interval':
    'the percentile-bootstrap interval of delta at the stated confidence; null when it could not be formed (see reason)',
  'classes.<c>.<w>[].verdict':
    'regressed when the interval excludes 0 on the worse side (higher latency, lower success rate or goodput) and |delta| exceeds the threshold (relative to the baseline for latency and goodput, absolute points for success_rate); improved likewise on the better side; within_noise otherwise; not_evaluable when a side has no value or no interval (see reason)',
  thresholds:
    'relative: the smallest |delta_relative| of a latency or goodput figure that counts; success_rate_points: the smallest |delta| of success_rate that counts',
  comparable:
    'whether both sides ran the same load: the same plan apart from its target and prompt calibration (SHA-256 of the rest: classes, phases, windows, seed, duration — a new build at a new address is what a comparison is for) and the same schedule (schedule_sha256); a comparison of different ones is refused unless --allow-different-plans, and then says so here with the problems',
  regressed: 'class/window/figure of every regressed figure',
  improved: 'class/window/figure of every improved figure',
};
