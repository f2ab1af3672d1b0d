// Calibration of the comparison's gate on simulated autocorrelated runs: over many A/A pairs (both
// sides drawn from one process) the share that fails the gate stays at or below the stated
// family-wise false-alarm rate, within a binomial allowance (at most the 99th percentile of
// Binomial(pairs, 0.05) — a method calibrated at 5% exceeds it 1 time in 100); and a real +20% TTFT
// is flagged at the stated rate. Never a single pair.
import { describe, expect, it } from 'vitest';
import { rngFromKey } from '../../shared/rng.js';
import type { CompareOptions } from './figures.js';
import { compareRuns } from './figures.js';
import { binomialUpper99, logAr, runOf, windowOf } from './simulate.test-kit.js';

const OPTS: CompareOptions = {
  confidence: 0.95,
  falseAlarm: 0.05,
  resamples: 200,
  relativeThreshold: 0.05,
  successThreshold: 0.01,
  seed: 'cal',
};

interface Case {
  n: number;
  phi: number;
  runs: number;
  /** Run-to-run variation: each run's level is scaled by exp(N(0, spread)). */
  spread: number;
  pairs: number;
}

/** A/A and A/B over PAIRS pairs: how many fail the gate with no change, and how many flag ttft_p95_ms after +20%. */
function calibrate(c: Case): { falseAlarms: number; flagged: number; detectable: number } {
  let falseAlarms = 0;
  let flagged = 0;
  const detectable: number[] = [];
  for (let p = 0; p < c.pairs; p++) {
    const rng = rngFromKey(`${c.n}:${c.phi}:${c.runs}:${c.spread}:${p}`);
    const side = (tag: string, shift: number) =>
      Array.from({ length: c.runs }, (_, i) =>
        runOf(`${tag}${i}`, windowOf(logAr(c.n, c.phi, rng, (1 + shift) * Math.exp(c.spread * rng.gaussian())))),
      );
    const base = side('a', 0);
    const aa = compareRuns(base, side('b', 0), OPTS);
    if (aa.regressed.length > 0) falseAlarms++;
    detectable.push(aa.classes.rt!.all!.find((f) => f.figure === 'ttft_p95_ms')!.detectable_change_relative ?? Number.POSITIVE_INFINITY);
    if (compareRuns(base, side('c', 0.2), OPTS).regressed.includes('rt/all/ttft_p95_ms')) flagged++;
  }
  const median = detectable.sort((a, b) => a - b)[Math.floor(detectable.length / 2)]!;
  console.log(
    `n ${c.n}, AR φ ${c.phi}, ${c.runs} run(s) a side, run-to-run ${c.spread * 100}%: false alarms ${falseAlarms}/${c.pairs}, +20% TTFT flagged ${flagged}/${c.pairs}, median detectable TTFT p95 change +${(median * 100).toFixed(1)}%`,
  );
  return { falseAlarms, flagged, detectable: median };
}

const allowed = (pairs: number) => binomialUpper99(pairs, OPTS.falseAlarm);

describe('the gate on simulated autocorrelated runs', () => {
  it('states the binomial allowance', () => {
    expect([allowed(200), allowed(100)]).toEqual([18, 11]);
  });

  it('independent latencies, one run of 300 a side', () => {
    const r = calibrate({ n: 300, phi: 0, runs: 1, spread: 0, pairs: 200 });
    expect(r.falseAlarms).toBeLessThanOrEqual(allowed(200));
    expect(r.flagged).toBeGreaterThanOrEqual(0.8 * 200);
  }, 120_000);

  it('AR(1) φ 0.95, one run of 300 a side: at the edge, and it says +20% is below what it can see', () => {
    const r = calibrate({ n: 300, phi: 0.95, runs: 1, spread: 0, pairs: 200 });
    expect(r.falseAlarms).toBeLessThanOrEqual(allowed(200));
    expect(r.detectable).toBeGreaterThan(0.2);
  }, 120_000);

  it('AR(1) φ 0.95, one run of 3,000 a side', () => {
    const r = calibrate({ n: 3000, phi: 0.95, runs: 1, spread: 0, pairs: 100 });
    expect(r.falseAlarms).toBeLessThanOrEqual(allowed(100));
    expect(r.flagged).toBeGreaterThanOrEqual(0.55 * 100);
  }, 120_000);

  it('AR(1) φ 0.95, 3 runs of 300 a side, 7.5% run-to-run variation: no false alarm, and it says +20% is below what it can see', () => {
    const r = calibrate({ n: 300, phi: 0.95, runs: 3, spread: 0.075, pairs: 200 });
    expect(r.falseAlarms).toBeLessThanOrEqual(allowed(200));
    // A run of 300 requests at φ 0.95 holds ~8 independent stretches: its p95 alone varies by ~14%.
    expect(r.detectable).toBeGreaterThan(0.2);
  }, 120_000);

  it('AR(1) φ 0.5, 3 runs of 300 a side, 5% run-to-run variation', () => {
    const r = calibrate({ n: 300, phi: 0.5, runs: 3, spread: 0.05, pairs: 200 });
    expect(r.falseAlarms).toBeLessThanOrEqual(allowed(200));
    expect(r.flagged).toBeGreaterThanOrEqual(0.35 * 200);
  }, 120_000);

  it('AR(1) φ 0.5, 5 runs of 300 a side, 10% run-to-run variation', () => {
    const r = calibrate({ n: 300, phi: 0.5, runs: 5, spread: 0.1, pairs: 200 });
    expect(r.falseAlarms).toBeLessThanOrEqual(allowed(200));
    expect(r.flagged).toBeGreaterThanOrEqual(0.4 * 200);
  }, 120_000);
});
