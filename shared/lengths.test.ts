// 10,000 drawn lengths per distribution against its exact probability mass function, by Pearson's
// chi-square goodness-of-fit test at α = 0.001: the drawn integers are binned (adjacent lengths
// merged until each bin expects ≥ 20 draws), X² = Σ (observed − expected)² / expected, and X² must
// stay below the χ² critical value for df = bins − 1 (Wilson–Hilferty: df·(1 − 2/(9df) + z·√(2/(9df)))³,
// z = 3.0902 for α = 0.001). The draws are seeded, so the outcome is fixed, not flaky.
import { describe, expect, it } from 'vitest';
import { drawLength, lengthAt, lengthBounds, meanLength } from './lengths.js';
import type { LengthDistribution, Plan } from './plan.js';
import { rngFromKey } from './rng.js';
import { buildSchedule } from './schedule.js';
import { takeStripe } from './shares.js';

const DRAWS = 10_000;

// Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), enough for bins of ≥ 20 expected draws.
function phi(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** P(drawn length = k) for k in [lo, hi]: rounding to the nearest integer, then clamping. */
function pmf(d: LengthDistribution): Map<number, number> {
  const { lo, hi } = lengthBounds(d);
  const out = new Map<number, number>();
  if (d.distribution === 'histogram') {
    const total = d.buckets.reduce((s, b) => s + b[1], 0);
    for (const [k, w] of d.buckets) out.set(k, (out.get(k) ?? 0) + w / total);
    return out;
  }
  if (d.distribution === 'uniform') {
    for (let k = lo; k <= hi; k++) out.set(k, 1 / (hi - lo + 1));
    return out;
  }
  // CDF of the continuous draw X at x: P(X < x).
  const cdf = (x: number): number =>
    d.distribution === 'normal' ? phi((x - d.mean) / d.stddev) : x <= 0 ? 0 : phi((Math.log(x) - d.mu) / d.sigma);
  const top = Math.min(hi, lo + 200_000);
  for (let k = lo; k <= top; k++) {
    const below = k === lo ? 0 : cdf(k - 0.5);
    const upTo = k === hi ? 1 : cdf(k + 0.5);
    out.set(k, upTo - below);
  }
  return out;
}

function chiSquare(draws: readonly number[], p: Map<number, number>): { x2: number; df: number; critical: number } {
  const counts = new Map<number, number>();
  for (const x of draws) counts.set(x, (counts.get(x) ?? 0) + 1);
  for (const x of counts.keys()) if (!p.has(x)) throw new Error(`drew ${x}, which has probability 0`);
  const bins: { o: number; e: number }[] = [];
  let cur = { o: 0, e: 0 };
  for (const k of [...p.keys()].sort((a, b) => a - b)) {
    cur.o += counts.get(k) ?? 0;
    cur.e += p.get(k)! * draws.length;
    if (cur.e >= 20) {
      bins.push(cur);
      cur = { o: 0, e: 0 };
    }
  }
  // The tail left over joins the last bin.
  if (bins.length > 0) {
    bins.at(-1)!.o += cur.o;
    bins.at(-1)!.e += cur.e;
  } else bins.push(cur);
  const x2 = bins.reduce((s, b) => s + (b.o - b.e) ** 2 / b.e, 0);
  const df = bins.length - 1;
  const c = 2 / (9 * df);
  return { x2, df, critical: df * (1 - c + 3.0902 * Math.sqrt(c)) ** 3 };
}

const CASES: LengthDistribution[] = [
  { distribution: 'uniform', min: 100, max: 400 },
  { distribution: 'normal', mean: 1000, stddev: 300, min: 200, max: 1500 },
  { distribution: 'lognormal', mu: 6, sigma: 0.8, min: 16, max: 8000 },
  {
    distribution: 'histogram',
    buckets: [
      [128, 5],
      [512, 3],
      [2048, 1.5],
      [8192, 0.5],
    ],
  },
];

describe('length distributions', () => {
  for (const d of CASES) {
    it(`${d.distribution}: 10,000 per-request draws pass chi-square at α = 0.001 against the exact pmf`, () => {
      const draws = Array.from({ length: DRAWS }, (_, i) => lengthAt(d, 7, 'c', 'input_tokens', i));
      const { x2, df, critical } = chiSquare(draws, pmf(d));
      console.log(`${d.distribution}: X² ${x2.toFixed(1)}, df ${df}, critical ${critical.toFixed(1)}`);
      expect(df).toBeGreaterThan(2);
      expect(x2, `X² ${x2.toFixed(1)} with df ${df}, critical ${critical.toFixed(1)}`).toBeLessThan(critical);
    });
  }

  it('the test has power: draws from another distribution fail it', () => {
    const d = CASES[1]!;
    const shifted = { ...d, mean: 1030 } as LengthDistribution;
    const draws = Array.from({ length: DRAWS }, (_, i) => lengthAt(shifted, 7, 'c', 'input_tokens', i));
    const { x2, critical } = chiSquare(draws, pmf(d));
    expect(x2).toBeGreaterThan(critical);
  });

  it('clamps and rounds: every draw is an integer in [min, max]', () => {
    const d: LengthDistribution = { distribution: 'normal', mean: 10, stddev: 50, min: 3, max: 20 };
    const rng = rngFromKey('clamp');
    for (let i = 0; i < 1000; i++) {
      const x = drawLength(d, rng);
      expect(Number.isInteger(x) && x >= 3 && x <= 20).toBe(true);
    }
  });

  it('has the means it documents', () => {
    expect(meanLength({ distribution: 'uniform', min: 100, max: 400 })).toBe(250);
    expect(
      meanLength({
        distribution: 'histogram',
        buckets: [
          [100, 1],
          [300, 3],
        ],
      }),
    ).toBe(250);
    expect(meanLength(42)).toBe(42);
  });

  it('gives each request the same lengths whether 1 or 3 agents split the schedule', () => {
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'd',
      seed: 11,
      duration_s: 100,
      classes: [
        {
          name: 'a',
          prompt: { input_tokens: CASES[2]!, output_tokens: CASES[3]! },
          load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 100, rate_per_s: 100 }] },
        },
      ],
    };
    const one = buildSchedule(plan).classes[0]!;
    expect(one.arrivalsNs.length).toBeGreaterThan(DRAWS - 500);
    const seen = new Map<number, [number, number]>();
    for (let i = 0; i < 3; i++) {
      // Each agent builds the schedule on its own and reads its own requests' lengths from it.
      const own = buildSchedule(plan);
      expect(own.sha256).toBe(buildSchedule(plan).sha256);
      const stripe = takeStripe(own.classes[0]!, { index: i, count: 3 }, 0);
      for (const idx of stripe.requestIndices) {
        expect(seen.has(idx)).toBe(false);
        seen.set(idx, [own.classes[0]!.requests!.inputTokens[idx]!, own.classes[0]!.requests!.outputTokens[idx]!]);
      }
    }
    expect(seen.size).toBe(one.arrivalsNs.length);
    for (const [idx, [inp, out]] of seen) {
      expect(inp).toBe(one.requests!.inputTokens[idx]);
      expect(out).toBe(one.requests!.outputTokens[idx]);
      expect(inp).toBe(lengthAt(CASES[2]!, 11, 'a', 'input_tokens', idx));
    }
  });

  it('puts the lengths into schedule_sha256, and leaves fixed-length plans hashed as before', () => {
    const base: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'd',
      seed: 11,
      duration_s: 10,
      classes: [
        {
          name: 'a',
          prompt: { input_tokens: 100, output_tokens: 10 },
          load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 10, rate_per_s: 2 }] },
        },
      ],
    };
    const fixed = buildSchedule(base);
    expect(fixed.classes[0]!.requests).toBeUndefined();
    const withDist = (max: number): Plan => ({
      ...base,
      classes: [{ ...base.classes[0]!, prompt: { input_tokens: { distribution: 'uniform', min: 100, max }, output_tokens: 10 } }],
    });
    expect(buildSchedule(withDist(200)).sha256).not.toBe(buildSchedule(withDist(201)).sha256);
    expect(buildSchedule(withDist(200)).sha256).not.toBe(fixed.sha256);
  });
});
