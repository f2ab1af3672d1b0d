// Pure: the comparison of a baseline and a candidate (each one run, or the repeats of an experiment
// arm), per class and window: the change of each figure with its interval, test and verdict. A few
// declared figures gate (by default each class's SLO figures over the whole run), judged together
// with Holm's step-down so the chance of any false regression among them is held at the stated
// level; every other figure is reported with its own interval and does not gate. With one run a
// side, a change must also clear a margin the run cannot measure (its stamps' timing uncertainty
// and a stated run-to-run floor) to count; beyond the interval but not the margin it is undecided.
import { rngFromKey } from '../../shared/rng.js';
import { meanSide, perRunSide, quantileSides } from './estimate.js';
import { COMPARED_QUANTILES, goodputKey, latencyFigureKeys, quantileKey, successKey } from './figure-keys.js';
import type { SideEstimate } from './inference.js';
import { detectableChange, holm, holmAdjusted, testChange } from './inference.js';
import type { FloorByLevel } from './run-to-run-floor.js';
import { floorOf } from './run-to-run-floor.js';
import type { Better, ChangeVerdict, Threshold } from './verdict.js';
import { changeVerdict } from './verdict.js';

/** Metrics whose per-request values requests.ndjson gives (ITL gaps are only in the histograms). */
export const REQUEST_METRICS = ['ttft', 'tpot', 'e2e'] as const;
export type RequestMetric = (typeof REQUEST_METRICS)[number];
export { COMPARED_QUANTILES };
/** The power at which the smallest detectable change is stated. */
export const DETECTION_POWER = 0.8;
/** Latency metrics whose figures carry the stamps' timing uncertainty in their margin (first content token, last byte). */
const STAMPED = /^(ttft|e2e)_/;

/** One class in one window of one run. */
export interface WindowSample {
  /** Per-request values in ms of successful requests, sorted ascending (the report's distributions). */
  values: Record<RequestMetric, Float64Array>;
  /** Per-request values in ms in intended-send order, a failed request +∞ (it never met any bound). */
  series: Record<RequestMetric, Float64Array>;
  /** 1 for each successful request, 0 for each failed one, in intended-send order. */
  ok: Float64Array;
  /** 1 for each request counted as goodput, 0 otherwise, in intended-send order; null without an SLO. */
  goodSeries: Float64Array | null;
  requests: number;
  completed: number;
  /** Requests counted as goodput (run.json's definition); null when the class declares no SLO. */
  good: number | null;
  goodputRps: number | null;
  /** run.json's ITL percentiles (ms) of the window, keyed itl_p50_ms …; the histograms' figures. */
  itl: Record<string, number | null>;
  /**
   * Figures known only as points (a baseline from another tool: its aggregate percentiles, or ITL
   * pooled from its requests), compared without sampling variation of their own; value null when
   * the baseline cannot give the figure, with why.
   */
  fixed?: Record<string, { value: number | null; reason: string | null; approx?: boolean }>;
  /**
   * The p99 in ms of the window's successful requests' first-token stamp uncertainty (how late the
   * agent may have stamped a token's bytes; requests.ndjson first_content_uncertainty_ns, which
   * run.json client_health summarises); null when no request carried it.
   */
  timingUncertaintyMs?: number | null;
  /**
   * figure → ms: how much each request's own stamp uncertainty can raise the figure (its percentile
   * of the recorded values less that of each value minus its uncertainty); TTFT and e2e
   * percentiles. Absent: timingUncertaintyMs stands for every such figure.
   */
  timingMarginMs?: Record<string, number>;
  /** What series.ttft measures from: the actual send, or the intended send (the class's slo.basis). */
  ttftBasis?: 'sent' | 'intended';
  /**
   * TTFT series from the actual send in intended-send order (failed +∞), ended by the first content
   * token or by the first output of any kind, reasoning included; first_output null when a
   * successful request with a content token carries no first-output stamp. For a baseline from a
   * tool whose TTFT is defined so.
   */
  ttftFromSend?: { first_content: Float64Array; first_output: Float64Array | null };
}

/** What a comparison reads of one run. */
export interface RunSample {
  runId: string;
  /** SHA-256 of the plan's load, without its target (load.ts loadSha256). */
  planSha256: string;
  scheduleSha256: string;
  /** class → the compare figures its SLO bounds (ttft_p95_ms, tpot_p95_ms, e2e_p95_ms, success_rate). */
  sloFigures: Record<string, string[]>;
  /** class → window → sample. */
  classes: Record<string, Record<string, WindowSample>>;
}

/** One compared figure. */
export interface FigureChange {
  figure: string;
  unit: 'ms' | 'share' | 'req/s';
  better: Better;
  /** Whether this figure decides --fail-on-regression. */
  gating: boolean;
  baseline: number | null;
  candidate: number | null;
  /** Sides whose figure is +∞: failed requests reach its rank (baseline/candidate are then null). */
  failures_decide: ('baseline' | 'candidate')[];
  delta: number | null;
  delta_relative: number | null;
  interval: { low: number | null; high: number | null } | null;
  p_worse: number | null;
  /** Holm-adjusted p_worse over the gating figures (gating figures only). */
  p_worse_adjusted: number | null;
  /** The smallest true worsening this comparison would flag 4 times in 5 (gating figures only). */
  detectable_change: number | null;
  detectable_change_relative: number | null;
  /**
   * With one run on a side: what a change must clear besides its interval, in the figure's unit:
   * the stamps' timing uncertainty, the run-to-run floor and their sum (null with repeats a side).
   */
  margin: { timing: number; run_to_run: number; total: number } | null;
  /** One-sided p-value of the candidate being worse by more than margin.total (p_worse without a margin). */
  p_worse_beyond_margin: number | null;
  /** Gating figures: the one-sided bound of delta on the worse side at Holm's strictest level (false_alarm / gating figures). */
  worse_bound: number | null;
  /** Mean block length (requests) and correlation time of each side's runs; null for figures without requests. */
  block_len: { baseline: number; candidate: number } | null;
  correlation_time: { baseline: number; candidate: number } | null;
  verdict: ChangeVerdict;
  reason: string | null;
}

export interface CompareOptions {
  confidence: number;
  /** Family-wise rate of false regressions among the gating figures. */
  falseAlarm: number;
  resamples: number;
  relativeThreshold: number;
  successThreshold: number;
  seed: string;
  /** class/window/figure keys that gate; undefined: each class's SLO figures in window all. */
  gateOn?: readonly string[];
  /**
   * With one run on a side: the run-to-run floor, a share of the baseline a latency or goodput
   * change must clear besides its interval and timing uncertainty, one for every figure or one per
   * percentile level (run-to-run-floor.ts; 0: none).
   */
  runToRunFloor?: number | FloorByLevel;
}

export type CompareMethod = 'block-bootstrap-one-run' | 'two-level-repeats';

export interface Comparison {
  method: CompareMethod;
  baseline_runs: string[];
  candidate_runs: string[];
  gating: string[];
  classes: Record<string, Record<string, FigureChange[]>>;
  /** Gating figures that regressed (exit 5 with --fail-on-regression) and improved. */
  regressed: string[];
  improved: string[];
  /** Gating figures beyond their interval but not beyond their margin: neither pass nor regression. */
  undecided: string[];
  /** Non-gating figures beyond noise and threshold at their own level. */
  reported: { regressed: string[]; improved: string[]; undecided: string[] };
  /** What this comparison cannot tell, in sentences. */
  limits: string[];
  /** class → what its TTFT figures measure from: sent (the actual send) or intended (slo.basis intended); mixed when the runs differ. */
  ttft_basis: Record<string, 'sent' | 'intended' | 'mixed'>;
}

/** Two levels when each side has 2 or more runs; otherwise each side's runs' requests in blocks. */
export function compareMethod(baseline: readonly RunSample[], candidate: readonly RunSample[]): CompareMethod {
  return baseline.length >= 2 && candidate.length >= 2 ? 'two-level-repeats' : 'block-bootstrap-one-run';
}

interface Pending {
  key: string;
  figure: string;
  unit: FigureChange['unit'];
  better: Better;
  threshold: Threshold;
  b: SideEstimate | null;
  c: SideEstimate | null;
  reason: string | null;
  /** Shown, not gated or tested: a side's figure is only an approximation (why). */
  shownOnly?: string;
  /**
   * The stamps' timing uncertainty a change must clear (ms; 0 when none applies): upward the
   * candidate's (its late stamps can only raise it), downward the baseline's.
   */
  timing: { higher: number; lower: number };
  /** Whether the run-to-run floor applies (one run on a side, a latency or goodput figure). */
  floor: boolean;
}

/** The default gating keys: each class's SLO figures in window all. */
export function defaultGating(runs: readonly RunSample[]): string[] {
  const out = new Set<string>();
  for (const r of runs) for (const [cls, figs] of Object.entries(r.sloFigures)) for (const f of figs) out.add(`${cls}/all/${f}`);
  return [...out];
}

/** The whole comparison, over the classes and windows both sides have. */
export function compareRuns(baseline: readonly RunSample[], candidate: readonly RunSample[], o: CompareOptions): Comparison {
  const method = compareMethod(baseline, candidate);
  const pending: Pending[] = [];
  for (const cls of Object.keys(baseline[0]?.classes ?? {})) {
    if (!candidate.every((r) => r.classes[cls]) || !baseline.every((r) => r.classes[cls])) continue;
    for (const w of Object.keys(baseline[0]!.classes[cls]!)) {
      const b = baseline.map((r) => r.classes[cls]![w]).filter((x): x is WindowSample => x !== undefined);
      const c = candidate.map((r) => r.classes[cls]![w]).filter((x): x is WindowSample => x !== undefined);
      if (b.length !== baseline.length || c.length !== candidate.length) continue;
      pending.push(...windowFigures(b, c, o, `${cls}/${w}`));
    }
  }
  const gating = new Set(o.gateOn ?? defaultGating([...baseline, ...candidate]));
  const margins = pending.map((p) => marginOf(p, o.runToRunFloor ?? 0));
  const testable = pending.map((p) => !!(p.b && p.c && p.reason === null && p.shownOnly === undefined));
  const gated = pending.map((p, i) => (gating.has(p.key) && testable[i] ? i : -1)).filter((i) => i >= 0);
  // Holm's strictest level: what the first gating figure must reach, so what a detectable change and the worse-side bound are stated at.
  const strictest = o.falseAlarm / Math.max(1, gated.length);
  const lower = (i: number) => pending[i]!.better === 'lower';
  const tests = pending.map((p, i) =>
    testable[i] ? testChange(p.b!, p.c!, o.confidence, { higher: margins[i]!.higher, lower: margins[i]!.lower }, strictest) : null,
  );
  const worse = tests.map((t, i) => (t === null ? null : lower(i) ? t.pHigher : t.pLower));
  const better = tests.map((t, i) => (t === null ? null : lower(i) ? t.pLower : t.pHigher));
  const worseBeyond = tests.map((t, i) => (t === null ? null : lower(i) ? t.pHigherBeyond : t.pLowerBeyond));
  const betterBeyond = tests.map((t, i) => (t === null ? null : lower(i) ? t.pLowerBeyond : t.pHigherBeyond));
  const holmOf = (ps: readonly (number | null)[]) =>
    holm(
      gated.map((i) => ps[i]!),
      o.falseAlarm,
    );
  const [rejectWorse, rejectBetter, rejectWorseBeyond, rejectBetterBeyond] = [worse, better, worseBeyond, betterBeyond].map(holmOf) as [
    boolean[],
    boolean[],
    boolean[],
    boolean[],
  ];
  const adjusted = holmAdjusted(gated.map((i) => worseBeyond[i]!));
  const out: Comparison = {
    method,
    baseline_runs: baseline.map((r) => r.runId),
    candidate_runs: candidate.map((r) => r.runId),
    gating: [...gating],
    classes: {},
    regressed: [],
    improved: [],
    undecided: [],
    reported: { regressed: [], improved: [], undecided: [] },
    ttft_basis: ttftBases([...baseline, ...candidate]),
    limits: [
      ...limitsOf(baseline.length, candidate.length, pending),
      ...pending
        .filter((p, i) => gating.has(p.key) && tests[i] === null)
        .map(
          (p) =>
            `gating figure ${p.key} is not evaluable and gates nothing: ${p.shownOnly ?? p.reason ?? 'a side has no value for the figure'}`,
        ),
    ],
  };
  for (const [cls, basis] of Object.entries(out.ttft_basis))
    if (basis === 'mixed')
      out.limits.push(
        `class ${cls}: TTFT is read from the actual send in some runs and from the intended send in others (their slo.basis differ), so its change mixes two definitions`,
      );
  pending.forEach((p, i) => {
    const t = tests[i] ?? null;
    const g = gated.indexOf(i);
    // A figure shown but not tested still shows its change.
    const delta = t ? t.delta : p.b && p.c && Number.isFinite(p.b.point) && Number.isFinite(p.c.point) ? p.c.point - p.b.point : null;
    const tail = (1 - o.confidence) / 2;
    const beyond =
      g >= 0 ? { worse: rejectWorse[g]!, better: rejectBetter[g]! } : { worse: (worse[i] ?? 1) <= tail, better: (better[i] ?? 1) <= tail };
    const beyondMargin =
      g >= 0
        ? { worse: rejectWorseBeyond[g]!, better: rejectBetterBeyond[g]! }
        : { worse: (worseBeyond[i] ?? 1) <= tail, better: (betterBeyond[i] ?? 1) <= tail };
    const base = p.b?.point ?? null;
    const cand = p.c?.point ?? null;
    const verdict: ChangeVerdict =
      t === null || base === null ? 'not_evaluable' : changeVerdict(base, t.delta, beyond, p.threshold, beyondMargin);
    const m = margins[i]!;
    const test = g >= 0 && t ? detectableChange(t, strictest, DETECTION_POWER) : null;
    const mde = test === null ? null : test + m.total;
    const floor =
      base === null || !Number.isFinite(base)
        ? null
        : p.threshold.kind === 'relative'
          ? p.threshold.value * Math.abs(base)
          : p.threshold.value;
    const detectable = mde === null || floor === null ? mde : Math.max(mde, floor);
    const [cls, w] = p.key.split('/') as [string, string];
    const change: FigureChange = {
      figure: p.figure,
      unit: p.unit,
      better: p.better,
      gating: gating.has(p.key),
      baseline: finite(base),
      candidate: finite(cand),
      failures_decide: [
        ...(base === Number.POSITIVE_INFINITY ? ['baseline' as const] : []),
        ...(cand === Number.POSITIVE_INFINITY ? ['candidate' as const] : []),
      ],
      delta: round(delta),
      delta_relative: delta != null && base ? finite(delta / base) : null,
      interval: t && { low: round(t.interval.low), high: round(t.interval.high) },
      p_worse: round(worse[i] ?? null),
      p_worse_adjusted: g >= 0 ? round(adjusted[g]!) : null,
      detectable_change: round(detectable),
      detectable_change_relative: detectable !== null && base ? finite(detectable / Math.abs(base)) : null,
      margin: m.total > 0 || m.applies ? { timing: round(m.timing)!, run_to_run: round(m.runToRun)!, total: round(m.total)! } : null,
      p_worse_beyond_margin: round(worseBeyond[i] ?? null),
      worse_bound: g >= 0 && t ? round(lower(i) ? t.bound.low : t.bound.high) : null,
      block_len:
        p.b?.blockLen != null && p.c?.blockLen != null ? { baseline: round(p.b.blockLen)!, candidate: round(p.c.blockLen)! } : null,
      correlation_time: p.b?.tau != null && p.c?.tau != null ? { baseline: round(p.b.tau)!, candidate: round(p.c.tau)! } : null,
      verdict,
      reason: verdict === 'not_evaluable' ? (p.shownOnly ?? p.reason ?? 'a side has no value for the figure') : null,
    };
    const byWindow = out.classes[cls] ?? {};
    out.classes[cls] = byWindow;
    byWindow[w] = [...(byWindow[w] ?? []), change];
    const list = change.gating ? out : out.reported;
    if (verdict === 'regressed') list.regressed.push(p.key);
    if (verdict === 'improved') list.improved.push(p.key);
    if (verdict === 'undecided') list.undecided.push(p.key);
  });
  return out;
}

/** Per class, the basis its runs' TTFT figures were read on. */
function ttftBases(runs: readonly RunSample[]): Comparison['ttft_basis'] {
  const out: Comparison['ttft_basis'] = {};
  for (const r of runs)
    for (const [cls, byWindow] of Object.entries(r.classes)) {
      const basis = byWindow.all?.ttftBasis ?? 'sent';
      out[cls] = out[cls] === undefined || out[cls] === basis ? basis : 'mixed';
    }
  return out;
}

/**
 * What a figure's change must clear besides its interval: the stamps' timing uncertainty and the
 * run-to-run floor (× the baseline), upward (higher) and downward (lower); timing and total are
 * stated for the worse direction.
 */
function marginOf(
  p: Pending,
  floors: number | FloorByLevel,
): { timing: number; runToRun: number; total: number; higher: number; lower: number; applies: boolean } {
  const base = p.b?.point;
  const floor = floorOf(floors, p.figure);
  const runToRun = p.floor && base !== undefined && Number.isFinite(base) ? floor * Math.abs(base) : 0;
  const timing = p.better === 'lower' ? p.timing.higher : p.timing.lower;
  return {
    timing,
    runToRun,
    total: timing + runToRun,
    higher: p.timing.higher + runToRun,
    lower: p.timing.lower + runToRun,
    applies: p.floor,
  };
}

/** What the comparison cannot tell. */
function limitsOf(bRuns: number, cRuns: number, pending: readonly Pending[]): string[] {
  const out: string[] = [];
  if (bRuns < 2 || cRuns < 2)
    out.push(
      `${bRuns < 2 && cRuns < 2 ? 'one run a side' : `one run on the ${bRuns < 2 ? 'baseline' : 'candidate'} side`}: intervals hold each run's own noise over time (its requests resampled in blocks) but not run-to-run variation (another start of the same server, another seed), which can be larger, nor how late the client stamped its tokens; so a change must also clear a margin (the stamps' timing uncertainty and the run-to-run floor) to count, and is undecided short of it; compare experiments with 2 or more repeats a side (3 or more for useful power) for a sharp gate, and ITL has no interval`,
    );
  const short = pending.filter((p) => [p.b, p.c].some((s) => s?.shortRun));
  if (short.length > 0)
    out.push(
      `${short.length} figure(s) (e.g. ${short[0]!.key}) come from runs short for their own autocorrelation (correlation time above 3/4 of the block length): their intervals may be too narrow; run longer`,
    );
  return out;
}

/** Every figure of one class and window, not yet judged. */
function windowFigures(b: readonly WindowSample[], c: readonly WindowSample[], o: CompareOptions, at: string): Pending[] {
  const rel: Threshold = { kind: 'relative', value: o.relativeThreshold };
  const out: Omit<Pending, 'timing' | 'floor'>[] = [];
  const rng = (f: string, side: string) => rngFromKey(`${o.seed}:${at}:${f}:${side}`);
  for (const m of REQUEST_METRICS) {
    const sides = (s: readonly WindowSample[], tag: string) =>
      quantileSides(
        s.map((w) => w.series[m]),
        COMPARED_QUANTILES,
        o.resamples,
        rng(m, tag),
      );
    const bs = sides(b, 'b');
    const cs = sides(c, 'c');
    COMPARED_QUANTILES.forEach((q, qi) => {
      const figure = quantileKey(m, q);
      const reason = bs[qi] && cs[qi] ? null : `a run has no request with ${m} in the window`;
      out.push({ key: `${at}/${figure}`, figure, unit: 'ms', better: 'lower', threshold: rel, b: bs[qi]!, c: cs[qi]!, reason });
    });
  }
  for (const figure of latencyFigureKeys('itl')) {
    const bv = b.map((w) => w.itl[figure] ?? null);
    const cv = c.map((w) => w.itl[figure] ?? null);
    const has = !bv.includes(null) && !cv.includes(null);
    const bs = bv.includes(null) ? null : perRunSide(bv as number[], o.resamples, rng(figure, 'b'));
    const cs = cv.includes(null) ? null : perRunSide(cv as number[], o.resamples, rng(figure, 'c'));
    const reason = !has
      ? 'a run has no ITL figure'
      : bs && cs
        ? null
        : 'ITL gaps are not recorded per request (only in the histograms), so only run-to-run variation can give an interval; compare experiments with 2 or more repeats a side for an ITL verdict';
    out.push({ key: `${at}/${figure}`, figure, unit: 'ms', better: 'lower', threshold: rel, b: bs, c: cs, reason });
  }
  const succ = (s: readonly WindowSample[], tag: string) =>
    meanSide(
      s.map((w) => ({ series: w.ok, scale: 1 })),
      o.resamples,
      rng(successKey, tag),
    );
  const sb = succ(b, 'b');
  const sc = succ(c, 'c');
  out.push({
    key: `${at}/${successKey}`,
    figure: successKey,
    unit: 'share',
    better: 'higher',
    threshold: { kind: 'absolute', value: o.successThreshold },
    b: sb,
    c: sc,
    reason: sb && sc ? null : 'a run has no request in the window',
  });
  const goodput = (s: readonly WindowSample[], tag: string) =>
    s.some((w) => w.goodSeries === null || w.goodputRps === null)
      ? null
      : meanSide(
          s.map((w) => ({ series: w.goodSeries!, scale: w.good ? (w.requests * w.goodputRps!) / w.good : 0 })),
          o.resamples,
          rng(goodputKey, tag),
        );
  const gb = goodput(b, 'b');
  const gc = goodput(c, 'c');
  out.push({
    key: `${at}/${goodputKey}`,
    figure: goodputKey,
    unit: 'req/s',
    better: 'higher',
    threshold: rel,
    b: gb,
    c: gc,
    reason: gb && gc ? null : 'goodput needs an SLO: the class declares none on a side (or the window has no request)',
  });
  // One run on a side: its interval holds none of the run-to-run variation, nor its stamps' lateness.
  const oneRun = b.length < 2 || c.length < 2;
  const worst = (s: readonly WindowSample[], figure: string) =>
    Math.max(0, ...s.map((w) => w.timingMarginMs?.[figure] ?? w.timingUncertaintyMs ?? 0));
  const timing = (figure: string) =>
    oneRun && STAMPED.test(figure) ? { higher: worst(c, figure), lower: worst(b, figure) } : { higher: 0, lower: 0 };
  return out.map((p) => pinned({ ...p, timing: timing(p.figure), floor: oneRun && p.threshold.kind === 'relative' }, b, c, o.resamples));
}

/** A figure a side knows only as a point (WindowSample.fixed): its estimate without sampling variation. */
export function pointEstimate(value: number, resamples: number): SideEstimate {
  return { point: value, replicates: new Float64Array(resamples).fill(value), variance: 0, df: Number.POSITIVE_INFINITY };
}

/**
 * The pending figure with each side's fixed point, where a side of one run has one, in place of its
 * estimate; a side any of whose runs refuses the figure (a fixed null) has none. A point read
 * between two of a tool's percentiles is shown, never gated or tested: it carries no sampling
 * variation and its error is unknown.
 */
function pinned(p: Pending, b: readonly WindowSample[], c: readonly WindowSample[], resamples: number): Pending {
  const fixedOf = (s: readonly WindowSample[]) => {
    const refused = s.map((w) => w.fixed?.[p.figure]).find((f) => f?.value === null);
    return refused ?? (s.length === 1 ? s[0]!.fixed?.[p.figure] : undefined);
  };
  const fb = fixedOf(b);
  const fc = fixedOf(c);
  if (!fb && !fc) return p;
  const bs = fb ? (fb.value === null ? null : pointEstimate(fb.value, resamples)) : p.b;
  const cs = fc ? (fc.value === null ? null : pointEstimate(fc.value, resamples)) : p.c;
  const reason = bs && cs ? null : ((fb?.value === null ? fb.reason : fc?.value === null ? fc.reason : p.reason) ?? p.reason);
  const approx = [fb, fc].some((f) => f?.approx);
  return {
    ...p,
    b: bs,
    c: cs,
    reason,
    ...(approx && reason === null
      ? {
          shownOnly:
            "a side's figure is read between two of its tool's percentiles (the file lacks the failure-inclusive rank): shown, not tested or gated",
        }
      : {}),
  };
}

function finite(x: number | null): number | null {
  return x === null || !Number.isFinite(x) ? null : round(x);
}

function round(x: number | null): number | null {
  return x === null || !Number.isFinite(x) ? null : Math.round(x * 1e6) / 1e6;
}
