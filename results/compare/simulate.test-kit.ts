// Test kit: simulated runs whose latencies are autocorrelated as a queueing server's are (a log-AR(1)
// series: a slow level that wanders, lifting runs of consecutive requests), for the comparison's
// calibration and unit tests.
import type { Rng } from '../../shared/rng.js';
import type { RunSample, WindowSample } from './figures.js';

/** n values 100·scale·exp(0.3·x) of a stationary AR(1) x with coefficient phi, in time order. */
export function logAr(n: number, phi: number, rng: Rng, scale = 1): Float64Array {
  const out = new Float64Array(n);
  let x = rng.gaussian();
  for (let i = 0; i < n; i++) {
    x = phi * x + Math.sqrt(1 - phi * phi) * rng.gaussian();
    out[i] = 100 * scale * Math.exp(0.3 * x);
  }
  return out;
}

/** A window sample from a time-ordered TTFT series (e2e = TTFT + a steady 400 ms decode; every request ok). */
export function windowOf(ttft: Float64Array, failed: readonly number[] = []): WindowSample {
  const n = ttft.length;
  const t = Float64Array.from(ttft);
  for (const i of failed) t[i] = Number.POSITIVE_INFINITY;
  const e2e = t.map((v) => v + 400);
  const ok = Float64Array.from(t, (v) => (Number.isFinite(v) ? 1 : 0));
  const sorted = (x: Float64Array) => x.filter((v) => Number.isFinite(v)).sort();
  const completed = ok.reduce((s, v) => s + v, 0);
  return {
    values: { ttft: sorted(t), tpot: new Float64Array(0), e2e: sorted(e2e) },
    series: { ttft: t, tpot: new Float64Array(0), e2e },
    ok,
    goodSeries: null,
    requests: n,
    completed,
    good: null,
    goodputRps: null,
    itl: { itl_p50_ms: 5, itl_p95_ms: 6, itl_p99_ms: 7 },
  };
}

/** A run of class rt (SLO figures ttft_p95_ms, e2e_p95_ms and success_rate) with window all only. */
export function runOf(id: string, w: WindowSample): RunSample {
  return {
    runId: id,
    planSha256: 'p',
    scheduleSha256: 's',
    sloFigures: { rt: ['ttft_p95_ms', 'e2e_p95_ms', 'success_rate'] },
    classes: { rt: { all: w } },
  };
}

/** The 99th percentile of Binomial(n, p): the most false alarms a method calibrated at p shows in n pairs, 99 times in 100. */
export function binomialUpper99(n: number, p: number): number {
  let cdf = 0;
  let pk = (1 - p) ** n;
  for (let k = 0; k <= n; k++) {
    cdf += pk;
    if (cdf >= 0.99) return k;
    pk *= ((n - k) / (k + 1)) * (p / (1 - p));
  }
  return n;
}
