// Each tool's baseline file (test/fixtures/baselines/, written from each tool's own schema) read and
// mapped onto loadfleet's figures with hand-checked unit conversions, told apart by content, refused
// with every problem when malformed; and what an aggregate-only baseline does to the verdict.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { rngFromKey } from '../../../shared/rng.js';
import { baselineClass } from '../command.js';
import { COMPARISON_DEFINITIONS } from '../definitions.js';
import type { CompareOptions } from '../figures.js';
import { compareRuns } from '../figures.js';
import { binomialUpper99, logAr, runOf, windowOf } from '../simulate.test-kit.js';
import { detectFormat, parseText, readBaselineText } from './detect.js';
import { baselineLimits, baselineSource } from './statement.js';
import { baselineRun, failureInclusiveQuantile } from './to-sample.js';
import type { ForeignBaseline } from './types.js';

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/baselines/${name}`, import.meta.url), 'utf8');
const read = (name: string, o = {}) => {
  const r = readBaselineText(fixture(name), o);
  if ('problems' in r) throw new Error(r.problems.join('\n'));
  return r;
};
const near = (x: number | null | undefined, y: number) => expect(x).toBeCloseTo(y, 6);

describe('vLLM bench serve', () => {
  it('per request (--save-detailed): seconds to ms, TPOT excluding the first token, e2e from latencies, a failure from its error', () => {
    const b = read('vllm-bench-serve-detailed.json');
    expect(b).toMatchObject({ format: 'vllm', data: 'per-request', order: 'send-time', total: 6, failed: 1 });
    const r0 = b.requests![0]!;
    near(r0.ttft, 41.2); // 0.0412 s
    near(r0.e2e, 71.4); // latencies[0] = 0.0412 + 0.0101 + 0.0099 + 0.0102 s
    near(r0.tpot, 30.2 / 3); // (0.0714 − 0.0412) s / (4 − 1)
    expect(b.requests![2]).toMatchObject({ ok: false, ttft: null, e2e: null });
    expect(b.itlGaps).toHaveLength(15); // 5 successful requests × 3 gaps
    near(b.itlGaps![0], 10.1);
  });

  it('aggregate only: the ms percentiles as written, median as p50, e2el as e2e, failures counted', () => {
    const b = read('vllm-bench-serve.json');
    expect(b).toMatchObject({ data: 'aggregate', total: 200, failed: 4, requests: null, version: null });
    expect([...b.aggregate.ttft!]).toEqual([
      [0.5, 81.2],
      [0.95, 131.5],
      [0.99, 166],
    ]);
    expect(b.aggregate.e2e!.get(0.99)).toBe(355.1);
    expect(b.figures.find((f) => f.figure === 'tpot')).toMatchObject({ comparable: 'same', source: '$.median_tpot_ms, $.pNN_tpot_ms' });
  });
});

describe('GuideLLM', () => {
  it('asks which benchmark when the report holds several', () => {
    const r = readBaselineText(fixture('guidellm-benchmarks.json'));
    expect(r).toEqual({
      problems: [
        expect.stringMatching(
          /^\$\.benchmarks: 2 benchmarks; choose one with --baseline-benchmark N \(0: synchronous; 1: constant at 4 req\/s\)$/,
        ),
      ],
    });
  });

  it('per request: sorted by send time, TTFT and ITL in ms, request latency s → ms, its ITL as loadfleet TPOT', () => {
    const b = read('guidellm-benchmarks.json', { benchmark: 1 });
    expect(b).toMatchObject({ format: 'guidellm', version: '0.7.3', data: 'per-request', order: 'send-time', total: 6, failed: 1 });
    expect(b.requests!.map((r) => r.ttft)).toEqual([39.8, 42.3, 44.1, 40.5, 91.7, null]); // listed 1,0,3,2,4 then the errored one; sent 1,0,2,3,4,5
    near(b.requests![4]!.e2e, 123); // request_latency 0.123 s
    expect(b.requests![4]!.tpot).toBe(10.3); // inter_token_latency_ms
    expect(b.figures.find((f) => f.figure === 'itl')).toMatchObject({ comparable: 'absent', source: null });
  });

  it('aggregate only (no requests kept): the successful distribution, request latency in s → ms', () => {
    const b = read('guidellm-benchmarks.json', { benchmark: 0 });
    expect(b).toMatchObject({ data: 'aggregate', total: 6, failed: 0 });
    expect(b.aggregate.ttft!.get(0.5)).toBe(39.6);
    near(b.aggregate.e2e!.get(0.95), 75); // 0.075 s
    expect(b.aggregate.e2e!.get(1)).toBeCloseTo(75, 6); // max
  });
});

describe('AIPerf', () => {
  it('profile_export.jsonl: warm-up left out, error records failed, sorted by request_start_ns, chunk gaps as ITL', () => {
    const b = read('aiperf-artifacts/profile_export.jsonl');
    expect(b).toMatchObject({ format: 'aiperf', data: 'per-request', total: 5, failed: 1, excluded: { count: 1 } });
    expect(b.requests!.map((r) => r.ttft)).toEqual([41.6, 40.3, null, 43.9, 39.7]);
    near(b.requests![0]!.e2e, 71.8); // 41.6 + 10.2 + 9.9 + 10.1 ms
    near(b.requests![0]!.tpot, 10.0667); // inter_token_latency as written, ms
    expect(b.itlGaps).toHaveLength(12);
  });

  it('profile_export_aiperf.json: each metric by its unit, requests and errors counted', () => {
    const b = read('aiperf-artifacts/profile_export_aiperf.json');
    expect(b).toMatchObject({ data: 'aggregate', total: 200, failed: 4 });
    expect(b.aggregate.ttft!.get(0.95)).toBe(47.1);
    expect(b.aggregate.itl!.get(0.99)).toBe(10.9); // inter_chunk_latency
    expect(b.aggregate.tpot!.get(0.5)).toBe(10.01); // inter_token_latency
  });
});

describe('llm-d Benchmark Report', () => {
  it('inference-perf seconds: s and s/token to ms, failures counted, the producing tool named', () => {
    const b = read('benchmark-report-inference-perf.yaml');
    expect(b).toMatchObject({ format: 'benchmark-report', version: 'inference-perf 0.3.0', data: 'aggregate', total: 200, failed: 10 });
    near(b.aggregate.ttft!.get(0.95), 56.1); // 0.0561 s
    near(b.aggregate.tpot!.get(0.95), 10.5); // 0.0105 s/token
    near(b.aggregate.e2e!.get(1), 123.3); // max 0.1233 s
    expect(b.tool).toBe('llm-d Benchmark Report 0.2.1 (from inference-perf)');
  });
});

describe('detection and refusal', () => {
  it('tells each tool by content', () => {
    const formats = [
      'vllm-bench-serve-detailed.json',
      'vllm-bench-serve.json',
      'guidellm-benchmarks.json',
      'aiperf-artifacts/profile_export.jsonl',
      'aiperf-artifacts/profile_export_aiperf.json',
      'benchmark-report-inference-perf.yaml',
    ].map((f) => detectFormat(parseText(fixture(f))!));
    expect(formats).toEqual(['vllm', 'vllm', 'guidellm', 'aiperf', 'aiperf', 'benchmark-report']);
    expect(readBaselineText('{"hello": 1}')).toEqual({ problems: [expect.stringMatching(/^\$: not a baseline loadfleet reads/)] });
  });

  it('refuses a malformed vLLM file with every problem and its JSON path', () => {
    expect(readBaselineText(fixture('vllm-malformed.json'))).toEqual({
      problems: [
        '$.completed: missing (expected a number)',
        '$.errors: 5 entries, but $.ttfts has 6: the lists must run over the same requests',
        '$.ttfts[1]: expected a number ≥ 0, got "fast"',
        '$.itls[3][1]: expected a number ≥ 0, got -0.01',
      ],
    });
  });

  it('refuses a malformed Benchmark Report with every problem and its JSON path', () => {
    expect(readBaselineText(fixture('benchmark-report-malformed.yaml'))).toEqual({
      problems: [
        '$.results.request_performance.aggregate.requests.total: missing (expected a number)',
        '$.results.request_performance.aggregate.latency.time_to_first_token.units: expected a time unit (ms, s, ms/token, s/token), got "tokens/s"',
        '$.results.request_performance.aggregate.latency.request_latency.mean: missing (expected a number)',
        '$.results.request_performance.aggregate.latency.request_latency.p50: expected a number ≥ 0, got "0.07"',
      ],
    });
  });

  it('reads one of the results vLLM --append-result wrote, one per line', () => {
    const lines = `${fixture('vllm-bench-serve.json')}\n${fixture('vllm-bench-serve-detailed.json')}\n`;
    expect(readBaselineText(lines)).toEqual({
      problems: ['$: 2 vLLM results, one per line (--append-result); choose one with --baseline-benchmark N (0–1)'],
    });
    expect(readBaselineText(lines, { benchmark: 1 })).toMatchObject({ format: 'vllm', data: 'per-request', total: 6 });
  });

  it('reads by --baseline-format, and says when the file is not that tool’s', () => {
    const r = readBaselineText(fixture('vllm-bench-serve.json'), { format: 'guidellm' });
    expect(r).toEqual({ problems: ['$.benchmarks: missing or empty (expected a list of benchmarks)'] });
    expect(readBaselineText('{}', { format: 'locust' })).toEqual({
      problems: [expect.stringMatching(/^--baseline-format locust: expected one of vllm, guidellm/)],
    });
  });
});

describe('failures rank last in an aggregate baseline', () => {
  const qs = new Map([
    [0.5, 10],
    [0.9, 20],
    [0.95, 30],
    [0.99, 40],
    [1, 50],
  ]);
  it('reads the successes’ percentile q·n / (n − failed), exactly or between two, and +∞ once failures reach the rank', () => {
    expect(failureInclusiveQuantile(qs, 0.95, 100, 0)).toEqual({ value: 30, approx: false, reason: null });
    // 5 failed of 100: p50 of all = successes' 50/95 = 0.5263 → 10 + (0.0263 / 0.4) × 10.
    expect(failureInclusiveQuantile(qs, 0.5, 100, 5).value).toBeCloseTo(10 + ((50 / 95 - 0.5) / 0.4) * 10, 9);
    expect(failureInclusiveQuantile(qs, 0.95, 100, 5)).toEqual({ value: 50, approx: false, reason: null }); // rank 95 = the last success
    expect(failureInclusiveQuantile(qs, 0.99, 100, 5).value).toBe(Number.POSITIVE_INFINITY);
    expect(failureInclusiveQuantile(new Map([[0.99, 40]]), 0.95, 100, 0).reason).toBe('the baseline file reports no p95 (it has p99)');
  });
});

describe('an aggregate baseline in the verdict', () => {
  const OPTS: CompareOptions = {
    confidence: 0.95,
    falseAlarm: 0.05,
    resamples: 500,
    relativeThreshold: 0.05,
    successThreshold: 0.01,
    seed: 't',
  };
  /** The aggregate a tool would report of a run of n TTFTs around 100·scale ms. */
  const aggregateOf = (scale: number): ForeignBaseline => {
    const v = Float64Array.from(logAr(400, 0, rngFromKey(`agg${scale}`), scale)).sort();
    const q = (p: number) => v[Math.ceil(p * v.length) - 1]!;
    return {
      ...read('vllm-bench-serve.json'),
      aggregate: { ttft: new Map([0.5, 0.95, 0.99].map((p) => [p, q(p)])), e2e: new Map([0.5, 0.95, 0.99].map((p) => [p, q(p) + 400])) },
      total: 400,
      failed: 0,
    };
  };
  const candidate = (scale: number) => runOf('c', windowOf(logAr(400, 0, rngFromKey(`cand${scale}`), scale)));

  it('gates a clearly slower candidate against the baseline’s points, and passes an equal one', () => {
    const { run } = baselineRun(aggregateOf(1), 'rt');
    const slow = compareRuns([run], [candidate(1.3)], OPTS);
    expect(slow.regressed).toEqual(expect.arrayContaining(['rt/all/ttft_p95_ms']));
    const p95 = slow.classes.rt!.all!.find((f) => f.figure === 'ttft_p95_ms')!;
    expect(p95.block_len).toBeNull(); // the baseline side has no blocks: it is a point
    expect(p95.interval!.low).toBeGreaterThan(0);
    const same = compareRuns([run], [candidate(1)], OPTS);
    expect(same.regressed).toEqual([]);
    expect(same.classes.rt!.all!.find((f) => f.figure === 'success_rate')).toMatchObject({ baseline: 1, verdict: 'within_noise' });
  });

  it('raises the false-alarm rate, as limits says: A/A pairs fail the gate more often against an aggregate than against the same baseline per request', () => {
    // 200 A/A pairs of 300 independent TTFTs; the gate is TTFT p95, e2e p95 and success rate at 5% family-wise.
    let aggregate = 0;
    let perRequest = 0;
    for (let i = 0; i < 200; i++) {
      const a = logAr(300, 0, rngFromKey(`a${i}`));
      const sorted = Float64Array.from(a).sort();
      const q = (p: number) => sorted[Math.ceil(p * 300) - 1]!;
      const fb: ForeignBaseline = {
        ...read('vllm-bench-serve.json'),
        aggregate: { ttft: new Map([0.5, 0.95, 0.99].map((p) => [p, q(p)])), e2e: new Map([0.5, 0.95, 0.99].map((p) => [p, q(p) + 400])) },
        total: 300,
        failed: 0,
      };
      const cand = runOf('c', windowOf(logAr(300, 0, rngFromKey(`c${i}`))));
      if (compareRuns([baselineRun(fb, 'rt').run], [cand], OPTS).regressed.length > 0) aggregate++;
      if (compareRuns([runOf('a', windowOf(a))], [cand], OPTS).regressed.length > 0) perRequest++;
    }
    console.log(`A/A gate failures of 200: aggregate baseline ${aggregate}, per-request baseline ${perRequest}`);
    expect(perRequest).toBeLessThanOrEqual(binomialUpper99(200, 0.05));
    expect(aggregate).toBeGreaterThan(perRequest);
  }, 60_000);

  it('states that the baseline’s own sampling variation is not in the interval', () => {
    const limits = baselineLimits(aggregateOf(1), [], 1);
    expect(limits[0]).toMatch(/aggregates only.*not held at the stated level/);
    expect(limits.at(-2)).toMatch(/loadfleet cannot check that it offered the candidate's load/);
  });
});

describe('a per-request baseline in the verdict', () => {
  it('ranks the failed request +∞ and counts it in the success rate', () => {
    const { run } = baselineRun(read('vllm-bench-serve-detailed.json'), 'rt');
    const w = run.classes.rt!.all!;
    expect([...w.series.ttft].map((v) => Math.round(v * 10) / 10)).toEqual([41.2, 38.8, Number.POSITIVE_INFINITY, 45.5, 40.1, 39.7]);
    expect([...w.ok]).toEqual([1, 1, 0, 1, 1, 1]);
    expect(w.fixed!.itl_p50_ms!.value).toBeCloseTo(10.0, 9); // nearest rank 8 of the 15 pooled gaps
    expect(w.fixed!.ttft_p50_ms).toBeUndefined(); // bootstrapped, not fixed
  });
});

describe('comparison.json of a baseline from another tool', () => {
  it('defines every field of baseline.source', () => {
    const source = baselineSource(read('vllm-bench-serve.json'), 'x.json');
    const missing = Object.keys(source).filter((k) => !COMPARISON_DEFINITIONS[`baseline.source.${k}`]);
    expect(missing).toEqual([]);
  });

  it('stands for the candidate class named, or its only one', () => {
    const two = { ...runOf('c', windowOf(new Float64Array(1))), classes: { rt: {}, batch: {} } };
    expect(baselineClass([runOf('c', windowOf(new Float64Array(1)))], undefined)).toBe('rt');
    expect(baselineClass([two], 'batch')).toBe('batch');
    expect(() => baselineClass([two], undefined)).toThrow(/several classes/);
  });
});
