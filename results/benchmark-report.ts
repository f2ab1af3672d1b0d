// Pure: a run as an llm-d Benchmark Report (v0.2.1), the file llm-d-benchmark's tooling and
// inference-perf read, so a team can hand a loadfleet run to them unchanged. The standard has one
// workload per report: a run writes one for the whole run (every class merged) and, when it has
// several classes, one per class. What the standard has no place for — clock domain, validity gates,
// SLO verdicts, what each figure means here — goes in scenario.load.native.config.loadfleet.

/** The Benchmark Report version written (llm-d-benchmark's br_v0_2_1_json_schema.json). */
export const BENCHMARK_REPORT_VERSION = '0.2.1';

/** A Benchmark Report Statistics block: units, mean and whichever of the rest are known. */
export interface BrStatistics {
  units: string;
  mean: number;
  stddev?: number;
  min?: number;
  p0p1?: number;
  p1?: number;
  p5?: number;
  p10?: number;
  p25?: number;
  p50?: number;
  p75?: number;
  p90?: number;
  p95?: number;
  p99?: number;
  p99p9?: number;
  max?: number;
}

/** The percentiles a Benchmark Report names, as quantiles, by their keys. */
export const BR_PERCENTILES: readonly (readonly [keyof BrStatistics, number])[] = [
  ['p0p1', 0.001],
  ['p1', 0.01],
  ['p5', 0.05],
  ['p10', 0.1],
  ['p25', 0.25],
  ['p50', 0.5],
  ['p75', 0.75],
  ['p90', 0.9],
  ['p95', 0.95],
  ['p99', 0.99],
  ['p99p9', 0.999],
];

/** The latency metrics a report carries: the standard's name for each, and loadfleet's. */
export const BR_LATENCY: readonly (readonly [string, string])[] = [
  ['time_to_first_token', 'ttft'],
  ['normalized_time_per_output_token', 'ntpot'],
  ['time_per_output_token', 'tpot'],
  ['inter_token_latency', 'itl'],
  ['request_latency', 'e2e'],
];

/**
 * A class window's figures for one metric (run.json `classes.<c>.windows.all`: exact, in ms) as
 * Statistics, or null when no request carried the metric.
 */
export function statsFromWindow(w: Record<string, unknown>, metric: string): BrStatistics | null {
  const n = w[`${metric}_samples`];
  const mean = w[`${metric}_mean_ms`];
  if (typeof n !== 'number' || n === 0 || typeof mean !== 'number') return null;
  const s: BrStatistics = { units: 'ms', mean };
  const put = (key: keyof BrStatistics, field: string): void => {
    const v = w[`${metric}_${field}_ms`];
    if (typeof v === 'number') (s as unknown as Record<string, number>)[key] = v;
  };
  put('stddev', 'stddev');
  put('min', 'min');
  for (const p of ['p50', 'p90', 'p95', 'p99'] as const) put(p, p);
  put('max', 'max');
  return s;
}

/** Exact Statistics of integer values held as value → count (token lengths, bytes), or null if none. */
export function statsFromCounts(counts: ReadonlyMap<number, number>, units: string): BrStatistics | null {
  const values = [...counts.keys()].sort((a, b) => a - b);
  let n = 0;
  let sum = 0;
  for (const v of values) {
    n += counts.get(v)!;
    sum += v * counts.get(v)!;
  }
  if (n === 0) return null;
  const mean = sum / n;
  let sq = 0;
  for (const v of values) sq += counts.get(v)! * (v - mean) ** 2;
  const s: BrStatistics = { units, mean, stddev: Math.sqrt(sq / n), min: values[0]!, max: values.at(-1)! };
  // Nearest rank, as every percentile loadfleet reports.
  const ranks = BR_PERCENTILES.map(([key, q]) => [key, Math.max(1, Math.ceil(q * n))] as const);
  let seen = 0;
  let r = 0;
  for (const v of values) {
    seen += counts.get(v)!;
    while (r < ranks.length && ranks[r]![1] <= seen) (s as unknown as Record<string, number>)[ranks[r++]![0]] = v;
  }
  return s;
}

/** A single rate as Statistics (one figure over the run: its mean, nothing else claimed). */
export function rateStats(perS: number | null | undefined, units: string): BrStatistics | null {
  return typeof perS === 'number' && Number.isFinite(perS) ? { units, mean: perS } : null;
}

/** ISO-8601 duration of a span in ms, e.g. PT7.908S. */
export function isoDuration(ms: number): string {
  return `PT${(Math.max(0, ms) / 1000).toFixed(3).replace(/\.?0+$/, '')}S`;
}

/** A sequence length as the standard words it, from a plan length (a number or a distribution) and the observed mean. */
export function sequenceLength(planned: unknown, observedMean: number | null): Record<string, unknown> | null {
  if (typeof planned === 'number') return { distribution: 'fixed', value: planned };
  if (planned && typeof planned === 'object') {
    const d = planned as Record<string, unknown>;
    const bounds = {
      ...(typeof d.min === 'number' && { min: Math.floor(d.min) }),
      ...(typeof d.max === 'number' && d.max >= 1 && { max: Math.ceil(d.max) }),
    };
    if (d.distribution === 'uniform' && typeof d.min === 'number' && typeof d.max === 'number')
      return { distribution: 'uniform', value: (d.min + d.max) / 2, ...bounds };
    if (d.distribution === 'normal' && typeof d.mean === 'number')
      return { distribution: 'gaussian', value: d.mean, ...(typeof d.stddev === 'number' && { std_dev: d.stddev }), ...bounds };
    return observedMean === null ? null : { distribution: 'other', value: observedMean, ...bounds };
  }
  return observedMean === null ? null : { distribution: 'other', value: observedMean };
}

/** What one report covers: the whole run, or one class of it. */
export interface BrScope {
  /** Unique id of this report: the run id, with `/<class>` for a class's own report. */
  uid: string;
  /** The experiment or sweep this run belongs to, if any (the standard's eid). */
  eid: string | null;
  description: string;
  startIso: string;
  endIso: string;
  durationMs: number;
  /** Agents that generated the load (the standard's parallelism). */
  agents: number;
  toolVersion: string;
  planSha256: string;
  /** Synthetic prompts are `random`; traces and datasets are `sampled`. */
  source: 'random' | 'sampled';
  inputSeqLen: Record<string, unknown>;
  outputSeqLen: Record<string, unknown> | null;
  rateQps: number | null;
  concurrency: number | null;
  maxTurns: Record<string, unknown> | null;
  /** Requests dispatched, failed, and never finished (cut by the end of the run). */
  total: number;
  failures: number;
  incomplete: number;
  inputLength: BrStatistics | null;
  outputLength: BrStatistics | null;
  requestSize: BrStatistics | null;
  latency: Record<string, BrStatistics | null>;
  throughput: Record<string, BrStatistics | null>;
  /** loadfleet's own evidence, kept whole in the native part. */
  native: Record<string, unknown>;
}

/** Drops null and undefined members, since the standard marks absent figures by leaving them out. */
function present<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
}

/** The Benchmark Report document for one scope. */
export function benchmarkReport(s: BrScope): Record<string, unknown> {
  return {
    version: BENCHMARK_REPORT_VERSION,
    run: present({
      uid: s.uid,
      eid: s.eid,
      time: { start: s.startIso, end: s.endIso, duration: isoDuration(s.durationMs) },
      description: s.description,
      keywords: ['loadfleet'],
    }),
    scenario: {
      load: {
        metadata: { schema_version: '0.0.1', cfg_id: s.planSha256, description: s.description },
        standardized: present({
          tool: 'loadfleet',
          tool_version: s.toolVersion,
          parallelism: Math.max(1, s.agents),
          source: s.source,
          stage: 0,
          input_seq_len: s.inputSeqLen,
          output_seq_len: s.outputSeqLen,
          multi_turn: s.maxTurns ? { enabled: true, max_turns: s.maxTurns } : null,
          rate_qps: s.rateQps !== null && s.rateQps > 0 ? s.rateQps : null,
          concurrency: s.concurrency !== null && s.concurrency >= 1 ? s.concurrency : null,
        }),
        native: { config: { loadfleet: s.native } },
      },
    },
    results: {
      request_performance: {
        aggregate: {
          requests: present({
            total: s.total,
            failures: s.failures,
            incomplete: s.incomplete,
            input_length: s.inputLength,
            output_length: s.outputLength,
            request_size: s.requestSize,
          }),
          latency: present(s.latency),
          throughput: present(s.throughput),
        },
      },
    },
  };
}
