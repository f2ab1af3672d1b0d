// Exact per-(class, window) bookkeeping over raw records: counts, tokens, SLO hits, and the raw
// metric values that the merged histograms are checked against. Pure; no I/O.

import { getOrCreate } from '../shared/maps.js';
import type { LatencyMetric, RequestRecord } from '../shared/metrics.js';
import { LATENCY_METRICS, metricNs } from '../shared/metrics.js';
import type { Slo } from '../shared/plan.js';
import { sloTtftMetric } from '../shared/plan.js';

/** Metrics that raw records determine exactly (ITL gaps are not in records). */
export const EXACT_METRICS = LATENCY_METRICS.filter((m): m is Exclude<LatencyMetric, 'itl'> => m !== 'itl');

/** Counts and raw values of one class in one window. */
export class WindowStats {
  requests = 0;
  completed = 0;
  failed = 0;
  http200 = 0;
  http429 = 0;
  completionTokens = 0;
  /** Successful requests that finished inside the window (for throughput_rps). */
  finishedInside = 0;
  sloHits = 0;
  /** Request outcomes (ok, http_error, timeout, …). */
  readonly statusCounts: Record<string, number> = {};
  /** HTTP status codes ("none" when no response arrived). */
  readonly httpCounts: Record<string, number> = {};
  readonly values = new Map<Exclude<LatencyMetric, 'itl'>, number[]>();

  constructor(
    private readonly startNs: number,
    private readonly endNs: number,
    private readonly slo: Slo | undefined,
  ) {}

  /** Adds one record that belongs to this window. */
  add(r: RequestRecord): void {
    this.requests++;
    this.statusCounts[r.status] = (this.statusCounts[r.status] ?? 0) + 1;
    const http = r.http_status === null ? 'none' : String(r.http_status);
    this.httpCounts[http] = (this.httpCounts[http] ?? 0) + 1;
    if (r.http_status === 200) this.http200++;
    if (r.http_status === 429) this.http429++;
    for (const m of EXACT_METRICS) {
      const v = metricNs(r, m);
      if (v === null) continue;
      getOrCreate(this.values, m, () => []).push(v);
    }
    if (r.status !== 'ok') {
      this.failed++;
      return;
    }
    this.completed++;
    this.completionTokens += r.completion_tokens ?? 0;
    if (r.done_ns !== null && r.done_ns >= this.startNs && r.done_ns < this.endNs) this.finishedInside++;
    if (this.slo && meetsSlo(r, this.slo)) this.sloHits++;
  }
}

/** Whether one successful request met every per-request bound its class declares (TTFT on the SLO's basis). */
export function meetsSlo(r: RequestRecord, slo: Slo): boolean {
  const within = (metric: Exclude<LatencyMetric, 'itl'>, boundMs: number | undefined): boolean => {
    if (boundMs === undefined) return true;
    const v = metricNs(r, metric);
    return v !== null && v <= boundMs * 1e6;
  };
  return within(sloTtftMetric(slo.basis), slo.ttft_p95_ms) && within('tpot', slo.tpot_p95_ms) && within('e2e', slo.e2e_p95_ms);
}
