// The seed benchmark's `metrics` block recomputed from its own `request_timings` with the
// product's statistics (nearest rank from histogram.ts, exact mean/stddev and the normal 95% CI
// from stats.ts): every derivable figure must match to the last bit.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nearestRank } from './histogram.js';
import { exactMean, meanCi95, median, round3, sampleStddev } from './stats.js';

const seed = JSON.parse(readFileSync(new URL('../test/fixtures/single-client-benchmark.json', import.meta.url), 'utf8'));
const timings: Record<string, any>[] = seed.request_timings;
const metrics: Record<string, unknown> = seed.metrics;

// metric name in the block → [request_timings field, unit suffix placed after the statistic]
const DISTRIBUTIONS: Record<string, [string, string]> = {
  completion_tokens: ['output_tokens', ''],
  decode_tok_s: ['decode_tok_s', ''],
  e2e: ['e2e_ms', '_ms'],
  effective_prefill_tok_s: ['effective_prefill_tok_s', ''],
  generation: ['generation_ms', '_ms'],
  mean_inter_token_latency_ms: ['mean_inter_token_latency_ms', ''],
  mean_time_per_output_token: ['mean_time_per_output_token_ms', '_ms'],
  prompt_tokens: ['prompt_tokens', ''],
  time_to_first_output: ['time_to_first_output_ms', '_ms'],
  tpot: ['tpot_ms', '_ms'],
  ttft: ['ttft_ms', '_ms'],
};

// Figures the request timings cannot give, and why (the test fails on any other unmatched key).
const NOT_FROM_TIMINGS = new Set([
  'prefix_cache_hit_avg', // needs cached-token counts, which the timings do not carry
  'content_chunks_s', // null in the seed (no visible-content timing)
  'controlled_output_exact_adherence_rate', // null: no controlled-output samples
  'throughput_performance_eligible', // a policy flag, not a statistic
]);

function computed(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, [field, unit]] of Object.entries(DISTRIBUTIONS)) {
    const values = timings.map((t) => t[field] as number);
    const sorted = Float64Array.from(values).sort();
    const ci = meanCi95(values);
    out[`${name}_samples`] = values.length;
    out[`${name}_mean${unit}`] = ci.mean;
    out[`${name}_stddev${unit}`] = ci.stddev;
    out[`${name}_mean_ci95_low${unit}`] = ci.low;
    out[`${name}_mean_ci95_high${unit}`] = ci.high;
    out[`${name}_min${unit}`] = sorted[0];
    out[`${name}_max${unit}`] = sorted[sorted.length - 1];
    for (const q of [25, 50, 75, 90, 95, 99]) out[`${name}_p${q}${unit}`] = nearestRank(sorted, q / 100);
  }
  const total = (f: string): number => timings.reduce((a, t) => a + (t[f] as number), 0);
  out.output_tokens = total('output_tokens');
  out.prompt_tokens = total('prompt_tokens');
  out.prompt_token_samples = timings.length;
  out.content_chunks = total('content_chunks');
  out.reasoning_chunks = total('reasoning_chunks');
  out.throughput_tok_s = total('output_tokens') / (seed.wall_clock_ms / 1000);
  out.request_canary_samples = timings.filter((t) => t.request_canary).length;
  out.request_canary_passed = timings.filter((t) => t.request_canary?.passed === true).length;
  const sources: Record<string, number> = {};
  for (const t of timings) sources[t.output_token_source] = (sources[t.output_token_source] ?? 0) + 1;
  out.output_token_sources = sources;
  const controlled = timings.filter((t) => t.controlled_output !== null);
  out.controlled_output_samples = controlled.length;
  out.controlled_output_exact_adherence = controlled.filter((t) => t.controlled_output?.exact === true).length;
  out.controlled_output_unobservable = controlled.filter((t) => t.controlled_output?.observable === false).length;
  return out;
}

describe('seed single-client benchmark: metrics from request_timings', () => {
  const mine = computed();
  it('matches every derivable figure exactly', () => {
    for (const [key, expected] of Object.entries(metrics)) {
      if (NOT_FROM_TIMINGS.has(key)) continue;
      expect(Object.hasOwn(mine, key), `${key} is not computed`).toBe(true);
      expect(mine[key], key).toEqual(expected);
    }
  });
  it('the normal CI differs from a t-distribution CI (so the method is really identified)', () => {
    // With n = 6 a t interval (t = 2.571) would be 31% wider than the seed's.
    const v = timings.map((t) => t.ttft_ms as number);
    const half = (metrics.ttft_mean_ci95_high_ms as number) - (metrics.ttft_mean_ms as number);
    expect(half / (sampleStddev(v) / Math.sqrt(v.length))).toBeCloseTo(1.96, 12);
  });
});

describe('stats', () => {
  it('mean and stddev are exact where a float sum is not', () => {
    expect(exactMean([0.1, 0.2, 0.3])).toBe(0.2);
    expect(0.1 + 0.2 + 0.3).not.toBe(0.6);
    expect(exactMean([1e16, 1, -1e16])).toBe(1 / 3);
    expect(sampleStddev([2, 4, 4, 4, 5, 5, 7, 9])).toBe(Math.sqrt(32 / 7));
    expect(sampleStddev([3, 3, 3])).toBe(0);
  });
  it('small samples give nulls, never zeros', () => {
    expect(meanCi95([])).toEqual({ mean: null, stddev: null, low: null, high: null });
    expect(meanCi95([5])).toEqual({ mean: 5, stddev: null, low: null, high: null });
  });
  it('median and rounding', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
    expect(round3(1.015625)).toBe(1.016);
    expect(round3(1.0078125)).toBe(1.008);
    expect(round3(0.0703125)).toBe(0.07);
    expect(round3(-2.0005)).toBe(-2.001);
  });
});
