// Exact counts of one class in one window over raw request records: requests, outcomes, tokens,
// SLO hits and goodput. Pure, and mergeable by addition, so the same figures come from the
// coordinator counting every record it receives (figures/window-stats.ts) or from agents that
// count their own records and send only the counts (`records: { sample_every }` in a plan: the
// agents keep their records and send a sample, see docs/relay-tier.md).
import type { RequestRecord } from './metrics.js';
import { EXACT_OUTPUT_SOURCES, metricNs } from './metrics.js';
import type { Slo } from './plan.js';
import { sloTtftMetric } from './plan.js';
import { declaredBounds } from './slo-bounds.js';

/** A tally as it travels in an agent's `final` (class → window → counts). */
export interface RecordTallyData {
  requests: number;
  completed: number;
  failed: number;
  dispatched: number;
  http200: number;
  http429: number;
  completionTokens: number;
  inputs: number;
  promptTokens: number;
  finishedInside: number;
  sloHits: number;
  goodInside: number;
  okWithoutFirstToken: number;
  okUncountedOutput: number;
  okOneToken: number;
  statusCounts: Record<string, number>;
  httpCounts: Record<string, number>;
  /** The latest done_ns (ns from the run start) of any request counted (0 without one). */
  lastDoneNs: number;
}

/** Counts of one class in one window. */
export class RecordTally implements RecordTallyData {
  requests = 0;
  completed = 0;
  failed = 0;
  /** Requests that carried an intended send time (open loop: dispatched against the schedule). */
  dispatched = 0;
  http200 = 0;
  http429 = 0;
  completionTokens = 0;
  /** Embeddings: inputs and prompt tokens of the successful requests. */
  inputs = 0;
  promptTokens = 0;
  /** Successful requests that finished inside the window (for throughput_rps). */
  finishedInside = 0;
  /** Successful requests that met every per-request bound (slo_attainment). */
  sloHits = 0;
  /** Of sloHits, those that finished inside the window: goodput, on throughput_rps's basis. */
  goodInside = 0;
  /** Successful requests without a first content token (their TTFT is unmeasurable). */
  okWithoutFirstToken = 0;
  /** Successful requests whose output count is not exact (chunk estimate or none): no TPOT. */
  okUncountedOutput = 0;
  /** Successful requests with exactly one counted output token: no TPOT (no gap to divide). */
  okOneToken = 0;
  /** Request outcomes (ok, http_error, timeout, …). */
  readonly statusCounts: Record<string, number> = {};
  /** HTTP status codes ("none" when no response arrived). */
  readonly httpCounts: Record<string, number> = {};
  lastDoneNs = 0;

  constructor(
    protected readonly startNs: number,
    protected readonly endNs: number,
    protected readonly slo: Slo | undefined,
  ) {}

  /** Counts one record that belongs to this window. */
  add(r: RequestRecord): void {
    this.requests++;
    if (r.intended_ns !== null) this.dispatched++;
    if (r.done_ns !== null && r.done_ns > this.lastDoneNs) this.lastDoneNs = r.done_ns;
    this.statusCounts[r.status] = (this.statusCounts[r.status] ?? 0) + 1;
    const http = r.http_status === null ? 'none' : String(r.http_status);
    this.httpCounts[http] = (this.httpCounts[http] ?? 0) + 1;
    if (r.http_status === 200) this.http200++;
    if (r.http_status === 429) this.http429++;
    if (r.status !== 'ok') {
      this.failed++;
      return;
    }
    this.completed++;
    this.completionTokens += r.completion_tokens ?? 0;
    this.inputs += r.inputs ?? 0;
    this.promptTokens += r.prompt_tokens ?? 0;
    if (r.first_content_ns === null) this.okWithoutFirstToken++;
    const counted = r.output_token_source !== null && EXACT_OUTPUT_SOURCES.includes(r.output_token_source);
    if (!counted) this.okUncountedOutput++;
    else if ((r.completion_tokens ?? 0) < 2) this.okOneToken++;
    const inside = r.done_ns !== null && r.done_ns >= this.startNs && r.done_ns < this.endNs;
    if (inside) this.finishedInside++;
    if (this.slo && meetsSlo(r, this.slo)) {
      this.sloHits++;
      if (inside) this.goodInside++;
    }
  }

  /** Adds another tally of the same class and window (another agent's, or another thread's). */
  addData(d: RecordTallyData): void {
    for (const k of NUMERIC_FIELDS) this[k] += d[k];
    for (const [s, n] of Object.entries(d.statusCounts)) this.statusCounts[s] = (this.statusCounts[s] ?? 0) + n;
    for (const [s, n] of Object.entries(d.httpCounts)) this.httpCounts[s] = (this.httpCounts[s] ?? 0) + n;
    if (d.lastDoneNs > this.lastDoneNs) this.lastDoneNs = d.lastDoneNs;
  }

  /** The tally as plain data (for the wire). */
  data(): RecordTallyData {
    const out = {
      statusCounts: { ...this.statusCounts },
      httpCounts: { ...this.httpCounts },
      lastDoneNs: this.lastDoneNs,
    } as RecordTallyData;
    for (const k of NUMERIC_FIELDS) out[k] = this[k];
    return out;
  }
}

/** The fields that add. */
const NUMERIC_FIELDS = [
  'requests',
  'completed',
  'failed',
  'dispatched',
  'http200',
  'http429',
  'completionTokens',
  'inputs',
  'promptTokens',
  'finishedInside',
  'sloHits',
  'goodInside',
  'okWithoutFirstToken',
  'okUncountedOutput',
  'okOneToken',
] as const;

/** Tallies by class and window, as an agent's `final` carries them. */
export type TalliesData = Record<string, Record<string, RecordTallyData>>;

/** Sums tallies by class and window (an agent's worker threads, say). */
export function mergeTallies(parts: readonly TalliesData[]): TalliesData {
  const out: TalliesData = {};
  for (const p of parts)
    for (const [cls, byWindow] of Object.entries(p))
      for (const [w, d] of Object.entries(byWindow)) {
        const into = new RecordTally(0, 0, undefined);
        const had = out[cls]?.[w];
        if (had) into.addData(had);
        into.addData(d);
        out[cls] = { ...out[cls], [w]: into.data() };
      }
  return out;
}

/**
 * Whether one successful request met every per-request bound its class declares (TTFT on the
 * SLO's basis). A bound the request cannot be measured on (TPOT of an output without two counted
 * tokens, TTFT of a response without a content token) is not held against it: as in vLLM's
 * goodput, a 1-token answer has no inter-token time to be too slow.
 */
export function meetsSlo(r: RequestRecord, slo: Slo): boolean {
  const within = (metric: Parameters<typeof metricNs>[1], boundMs: number | undefined): boolean => {
    if (boundMs === undefined) return true;
    const v = metricNs(r, metric);
    return v === null || v <= boundMs * 1e6;
  };
  // Every latency bound of the SLO table the class declares, applied to the request itself.
  return declaredBounds(slo).every(({ row, bound }) => within(row.metric === 'ttft' ? sloTtftMetric(slo.basis) : row.metric, bound));
}
