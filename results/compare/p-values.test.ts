// Calibration of the statistics themselves, not of the gate: over many simulated A/A pairs (both
// sides drawn from one autocorrelated process, no threshold or floor in force) the one-sided
// p_worse values must be uniform on [0, 1], tested by Kolmogorov–Smirnov against the uniform at
// the 1% level (critical D 1.628 / √pairs). A p-value that is uniform under A/A makes "p ≤ α"
// false-alarm exactly α of the time, whatever threshold is later added on top.
import { describe, expect, it } from 'vitest';
import { rngFromKey } from '../../shared/rng.js';
import { meanSide, quantileSides } from './estimate.js';
import { compareRuns } from './figures.js';
import { testChange } from './inference.js';
import { logAr, runOf, windowOf } from './simulate.test-kit.js';

const PAIRS = 300;
const RESAMPLES = 200;
/** Kolmogorov's critical D at 1% for PAIRS values: a uniform sample exceeds it 1 time in 100. */
const CRITICAL = 1.628 / Math.sqrt(PAIRS);

/** The Kolmogorov–Smirnov statistic of ps against the uniform on [0, 1]. */
function ksUniform(ps: readonly number[]): number {
  const s = [...ps].sort((a, b) => a - b);
  let d = 0;
  s.forEach((p, i) => {
    d = Math.max(d, (i + 1) / s.length - p, p - i / s.length);
  });
  return d;
}

interface Case {
  n: number;
  phi: number;
  runs: number;
  /** Run-to-run variation: each run's level scaled by exp(N(0, spread)). */
  spread: number;
}

/** PAIRS A/A pairs of one case: p_worse of the p50, the p95 and a share (requests under 130 ms), each side from its own draws. */
function aaPValues(c: Case): { p50: number[]; p95: number[]; share: number[] } {
  const out = { p50: [] as number[], p95: [] as number[], share: [] as number[] };
  for (let k = 0; k < PAIRS; k++) {
    const rng = rngFromKey(`aa:${c.n}:${c.phi}:${c.runs}:${c.spread}:${k}`);
    const side = () => Array.from({ length: c.runs }, () => logAr(c.n, c.phi, rng, Math.exp(c.spread * rng.gaussian())));
    const [a, b] = [side(), side()];
    const qa = quantileSides(a, [0.5, 0.95], RESAMPLES, rngFromKey(`qa${k}`));
    const qb = quantileSides(b, [0.5, 0.95], RESAMPLES, rngFromKey(`qb${k}`));
    out.p50.push(testChange(qa[0]!, qb[0]!, 0.9).pHigher);
    out.p95.push(testChange(qa[1]!, qb[1]!, 0.9).pHigher);
    const under = (s: Float64Array) => ({ series: s.map((v) => (v < 130 ? 1 : 0)), scale: 1 });
    const ma = meanSide(a.map(under), RESAMPLES, rngFromKey(`ma${k}`))!;
    const mb = meanSide(b.map(under), RESAMPLES, rngFromKey(`mb${k}`))!;
    out.share.push(testChange(ma, mb, 0.9).pLower);
  }
  return out;
}

function check(c: Case): void {
  const ps = aaPValues(c);
  const d = { p50: ksUniform(ps.p50), p95: ksUniform(ps.p95), share: ksUniform(ps.share) };
  const at5 = (x: number[]) => x.filter((p) => p <= 0.05).length;
  console.log(
    `n ${c.n}, AR φ ${c.phi}, ${c.runs} run(s) a side, run-to-run ${c.spread * 100}%: KS D p50 ${d.p50.toFixed(3)}, p95 ${d.p95.toFixed(3)}, share ${d.share.toFixed(3)} (critical ${CRITICAL.toFixed(3)}); p ≤ 0.05 in ${at5(ps.p50)}, ${at5(ps.p95)}, ${at5(ps.share)} of ${PAIRS}`,
  );
  expect(d.p50).toBeLessThan(CRITICAL);
  expect(d.p95).toBeLessThan(CRITICAL);
  expect(d.share).toBeLessThan(CRITICAL);
}

describe('A/A p-values are uniform (Kolmogorov–Smirnov, 1%)', () => {
  it('the statistic: 0 for an even grid, large for p-values piled at 0', () => {
    expect(ksUniform(Array.from({ length: 100 }, (_, i) => (i + 0.5) / 100))).toBeCloseTo(0.005, 9);
    expect(ksUniform(Array.from({ length: 100 }, (_, i) => i / 1000))).toBeGreaterThan(0.89);
  });

  it('independent latencies, one run of 300 a side', () => check({ n: 300, phi: 0, runs: 1, spread: 0 }), 60_000);
  it('AR(1) φ 0.5, one run of 500 a side', () => check({ n: 500, phi: 0.5, runs: 1, spread: 0 }), 60_000);
  it('AR(1) φ 0.9, one run of 1,000 a side', () => check({ n: 1000, phi: 0.9, runs: 1, spread: 0 }), 60_000);
  it('AR(1) φ 0.5, 3 runs of 300 a side, 5% run-to-run variation', () => check({ n: 300, phi: 0.5, runs: 3, spread: 0.05 }), 60_000);

  it('through compareRuns, no threshold in force: comparison.json’s p_worse of a gating figure is uniform too', () => {
    const ps: number[] = [];
    for (let k = 0; k < PAIRS; k++) {
      const rng = rngFromKey(`cr:${k}`);
      const [a, b] = [0, 1].map((i) => runOf(`${i}`, windowOf(logAr(300, 0.5, rng))));
      const c = compareRuns([a!], [b!], {
        confidence: 0.9,
        falseAlarm: 0.05,
        resamples: RESAMPLES,
        relativeThreshold: 0,
        successThreshold: 0,
        seed: `s${k}`,
        gateOn: ['rt/all/ttft_p95_ms'],
      });
      ps.push(c.classes.rt!.all!.find((f) => f.figure === 'ttft_p95_ms')!.p_worse!);
    }
    const d = ksUniform(ps);
    console.log(
      `compareRuns, AR(1) φ 0.5, one run of 300 a side: KS D ${d.toFixed(3)} over ${PAIRS} pairs (critical ${CRITICAL.toFixed(3)})`,
    );
    expect(d).toBeLessThan(CRITICAL);
  }, 60_000);
});
