// Pure: a tool's baseline as the comparison's one-run side for one class over the whole run (window
// all). Per-request data becomes the same time-ordered series a loadfleet run gives (a failed
// request +∞), so it is bootstrapped in blocks like a run; aggregate data becomes fixed points,
// each latency percentile counted over every request with failures ranked last, as loadfleet's
// figures are, so a baseline that failed often is not read as fast.
import { nearestRank } from '../bootstrap.js';
import { COMPARED_QUANTILES, quantileKey, successKey } from '../figure-keys.js';
import type { RequestMetric, RunSample, WindowSample } from '../figures.js';
import { REQUEST_METRICS } from '../figures.js';
import type { BaselineMetric, ForeignBaseline } from './types.js';

export interface FailureInclusive {
  /** ms; +∞ when failures reach the rank; null when the file cannot give it. */
  value: number | null;
  /** Read between two of the tool's percentiles (linear), not at one of them. */
  approx: boolean;
  reason: string | null;
}

const pName = (q: number) => `p${Math.round(q * 1000) / 10}`;

/**
 * The q-quantile over all `total` requests, `failed` of them ranking +∞, from the tool's quantiles
 * over successes: the rank ⌈q·total⌉ lies among the successes only when it is at most total −
 * failed, and it is then their quantile q·total / (total − failed). With no failure the tool's own
 * percentile is read exactly; otherwise between its two nearest percentiles.
 */
export function failureInclusiveQuantile(
  qs: ReadonlyMap<number, number> | undefined,
  q: number,
  total: number | null,
  failed: number | null,
): FailureInclusive {
  if (!qs || qs.size === 0) return { value: null, approx: false, reason: 'the baseline file has no such figure' };
  const f = failed ?? 0;
  const n = total ?? 0;
  if (f > 0 && n > 0 && Math.ceil(q * n) > n - f) return { value: Number.POSITIVE_INFINITY, approx: false, reason: null };
  const target = f > 0 && n > 0 ? (q * n) / (n - f) : q;
  const keys = [...qs.keys()].sort((a, b) => a - b);
  const exact = keys.find((k) => Math.abs(k - target) < 1e-9);
  if (exact !== undefined) return { value: qs.get(exact)!, approx: false, reason: null };
  if (f === 0)
    return { value: null, approx: false, reason: `the baseline file reports no ${pName(q)} (it has ${keys.map(pName).join(', ')})` };
  const lo = keys.filter((k) => k < target).at(-1);
  const hi = keys.find((k) => k > target);
  if (lo === undefined || hi === undefined)
    return {
      value: null,
      approx: false,
      reason: `with ${f} failed of ${n}, the ${pName(q)} of all requests is the successes' ${pName(target)}, outside the percentiles the file reports`,
    };
  const w = (target - lo) / (hi - lo);
  return { value: qs.get(lo)! + w * (qs.get(hi)! - qs.get(lo)!), approx: true, reason: null };
}

/** The baseline as a RunSample of one class (named as the candidate's) with window all only. */
export function baselineRun(fb: ForeignBaseline, cls: string): { run: RunSample; approximated: string[] } {
  const approximated: string[] = [];
  const fixed: NonNullable<WindowSample['fixed']> = {};
  const putQuantiles = (
    m: BaselineMetric,
    source: ReadonlyMap<number, number> | undefined,
    total: number | null,
    failed: number | null,
  ) => {
    for (const q of COMPARED_QUANTILES) {
      const r = failureInclusiveQuantile(source, q, total, failed);
      fixed[quantileKey(m, q)] = { value: r.value, reason: r.reason };
      if (r.approx) approximated.push(quantileKey(m, q));
    }
  };
  let sample: WindowSample;
  if (fb.requests) {
    const pts = fb.requests;
    const series = (m: RequestMetric) =>
      Float64Array.from(pts.filter((r) => !r.ok || r[m] !== null).map((r) => (r.ok ? r[m]! : Number.POSITIVE_INFINITY)));
    const s = { ttft: series('ttft'), tpot: series('tpot'), e2e: series('e2e') };
    const successes = (x: Float64Array) => x.filter((v) => Number.isFinite(v)).sort();
    sample = {
      values: { ttft: successes(s.ttft), tpot: successes(s.tpot), e2e: successes(s.e2e) },
      series: s,
      ok: Float64Array.from(pts, (r) => (r.ok ? 1 : 0)),
      goodSeries: null,
      requests: pts.length,
      completed: pts.filter((r) => r.ok).length,
      good: null,
      goodputRps: null,
      itl: {},
      fixed,
    };
    // ITL: the candidate's comes from its histograms, one figure per run, so the baseline's pooled gaps are read as points.
    if (fb.itlGaps) {
      const sorted = Float64Array.from(fb.itlGaps).sort();
      for (const q of COMPARED_QUANTILES) fixed[quantileKey('itl', q)] = { value: nearestRank(sorted, q), reason: null };
    } else putQuantiles('itl', fb.aggregate.itl, null, null);
  } else {
    const empty = () => new Float64Array(0);
    sample = {
      values: { ttft: empty(), tpot: empty(), e2e: empty() },
      series: { ttft: empty(), tpot: empty(), e2e: empty() },
      ok: empty(),
      goodSeries: null,
      requests: fb.total ?? 0,
      completed: fb.total !== null && fb.failed !== null ? fb.total - fb.failed : 0,
      good: null,
      goodputRps: null,
      itl: {},
      fixed,
    };
    for (const m of REQUEST_METRICS) putQuantiles(m, fb.aggregate[m], fb.total, fb.failed);
    // ITL is pooled over gaps, not requests: a failed request adds no gap, so the tool's percentiles are read as they are.
    putQuantiles('itl', fb.aggregate.itl, null, null);
    fixed[successKey] =
      fb.total !== null && fb.failed !== null && fb.total > 0
        ? { value: (fb.total - fb.failed) / fb.total, reason: null }
        : { value: null, reason: 'the baseline file does not count failed requests' };
  }
  const run: RunSample = {
    runId: `${fb.format}-baseline`,
    planSha256: '',
    scheduleSha256: '',
    sloFigures: {},
    classes: { [cls]: { all: sample } },
  };
  return { run, approximated };
}
