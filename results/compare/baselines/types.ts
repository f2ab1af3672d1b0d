// Pure: what a baseline from another tool (vLLM bench serve, GuideLLM, AIPerf, an llm-d Benchmark
// Report) becomes once read: loadfleet's figures in ms, per request when the file holds requests,
// or the tool's own percentiles when it holds aggregates only, with how each figure was mapped and
// what the comparison cannot tell because of it.

export const BASELINE_FORMATS = ['vllm', 'guidellm', 'aiperf', 'benchmark-report'] as const;
export type BaselineFormat = (typeof BASELINE_FORMATS)[number];

/** The latency metrics a baseline can give, by loadfleet's names. */
export type BaselineMetric = 'ttft' | 'tpot' | 'e2e' | 'itl';

/** One request of the baseline, its figures in ms (null when the request lacks one, e.g. TPOT of one token). */
export interface ForeignRequest {
  /** When it was sent (any clock, only the order matters); null when the file gives no time. */
  at: number | null;
  ok: boolean;
  ttft: number | null;
  tpot: number | null;
  e2e: number | null;
}

/** How one loadfleet figure is read from the baseline's file. */
export interface FigureSource {
  /** loadfleet's metric (its p50/p95/p99 figures), or success_rate. */
  figure: BaselineMetric | 'success_rate';
  /** The file's field(s) read, as JSON paths; null when the file has nothing for it. */
  source: string | null;
  /** The unit conversion applied to reach loadfleet's unit (ms, or a share). */
  conversion: string;
  /** same: one definition; close: the same quantity measured at slightly different instants; absent: not in the file. */
  comparable: 'same' | 'close' | 'absent';
  /** The definition's difference from loadfleet's, in a sentence. */
  note: string;
}

export interface ForeignBaseline {
  format: BaselineFormat;
  /** The tool, e.g. "vLLM bench serve". */
  tool: string;
  /** The tool's version as the file states it; null when the file does not say. */
  version: string | null;
  data: 'per-request' | 'aggregate';
  /** per-request only: sorted by the file's send times, or in the order the file lists them (the tool's send order). */
  order: 'send-time' | 'file-order-is-send-order' | null;
  /** per-request only: the requests compared. */
  requests: ForeignRequest[] | null;
  /** Chunk gaps in ms pooled over successful requests (loadfleet's ITL), when the file holds them per request. */
  itlGaps: number[] | null;
  /** The tool's percentiles over successful requests: metric → quantile (0.5, 0.99; 1 for max) → ms. */
  aggregate: Partial<Record<BaselineMetric, Map<number, number>>>;
  /** Requests counted by the tool, and how many of them failed; null when the file does not say. */
  total: number | null;
  failed: number | null;
  /** Requests the file lists but the comparison leaves out (warm-up, cancelled, cut by the end), with why. */
  excluded: { count: number; why: string } | null;
  figures: FigureSource[];
  /**
   * Which token ends the tool's TTFT: the first output of any kind, reasoning included (vLLM bench
   * serve, AIPerf, GuideLLM's time_to_first_token_ms), or the first content token as loadfleet's;
   * null when the file does not tell (the candidate's TTFT is then not compared).
   */
  ttftEnds: 'first_output' | 'first_content' | null;
  /** The load the tool offered, as the file states it (rate, concurrency, prompts, lengths). */
  load: Record<string, unknown>;
  /** What this baseline cannot tell, in sentences. */
  limits: string[];
}

/** Problems with a file, each with its JSON path; collected so a malformed baseline is refused with all of them. */
export class Problems {
  readonly list: string[] = [];
  add(path: string, what: string): void {
    this.list.push(`${path}: ${what}`);
  }
  /** A finite number ≥ 0 at path, or null (problem noted) when it is not one; absent is allowed when optional. */
  num(v: unknown, path: string, optional = false): number | null {
    if (v === undefined || v === null) {
      if (!optional) this.add(path, 'missing (expected a number)');
      return null;
    }
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      this.add(path, `expected a number ≥ 0, got ${JSON.stringify(v)}`);
      return null;
    }
    return v;
  }
  /** An array at path, or null (problem noted). */
  arr(v: unknown, path: string, optional = false): unknown[] | null {
    if (v === undefined || v === null) {
      if (!optional) this.add(path, 'missing (expected a list)');
      return null;
    }
    if (!Array.isArray(v)) {
      this.add(path, `expected a list, got ${typeof v}`);
      return null;
    }
    return v;
  }
  /** An object at path, or null (problem noted). */
  obj(v: unknown, path: string, optional = false): Record<string, unknown> | null {
    if (v === undefined || v === null) {
      if (!optional) this.add(path, 'missing (expected an object)');
      return null;
    }
    if (typeof v !== 'object' || Array.isArray(v)) {
      this.add(path, `expected an object, got ${Array.isArray(v) ? 'a list' : typeof v}`);
      return null;
    }
    return v as Record<string, unknown>;
  }
}

/** A time unit as the tools write them, as the factor to ms; null when it is not a time unit. */
export function toMsFactor(unit: unknown): number | null {
  switch (typeof unit === 'string' ? unit.trim().toLowerCase() : '') {
    case 'ns':
    case 'nanoseconds':
      return 1e-6;
    case 'us':
    case 'µs':
    case 'microseconds':
      return 1e-3;
    case 'ms':
    case 'milliseconds':
    case 'ms/token':
      return 1;
    case 's':
    case 'sec':
    case 'seconds':
    case 's/token':
      return 1000;
    default:
      return null;
  }
}
