// A stage's latency figures with every failed request ranked +∞: a request the server refused
// (429), dropped or timed out is the worst latency a user saw, not one left out. Read from the
// stage's requests.ndjson, beside its departures (departures.ts): the requests of the class whose
// window time (intended send, or send for a closed loop) fell in the measured window.
import type { RequestRecord } from '../../shared/metrics.js';
import { metricNs } from '../../shared/metrics.js';
import type { SloBasis } from '../../shared/plan.js';
import { sloTtftMetric } from '../../shared/plan.js';

/** The window's requests: how many, how many failed, and each measured success's TTFT and TPOT (ns). */
export interface WindowLatencies {
  requests: number;
  failed: number;
  ttftNs: number[];
  tpotNs: number[];
}

/** An empty accumulator. */
export function emptyLatencies(): WindowLatencies {
  return { requests: 0, failed: 0, ttftNs: [], tpotNs: [] };
}

/** Adds one parsed requests.ndjson row to `acc` when it is of the class and in the window. */
export function addLatencyRow(
  acc: WindowLatencies,
  row: Record<string, unknown>,
  cls: string,
  runStartNs: number,
  window: { start_s: number; end_s: number },
  basis: SloBasis,
): void {
  if (row.class !== cls) return;
  const at = (k: string): number | null => (row[k] === null || row[k] === undefined ? null : Number(row[k]) - runStartNs);
  const r = {
    status: row.status,
    intended_ns: at('intended_unix_ns'),
    sent_ns: at('sent_unix_ns') ?? 0,
    first_output_ns: at('first_output_unix_ns'),
    first_content_ns: at('first_content_unix_ns'),
    done_ns: at('done_unix_ns'),
    completion_tokens: typeof row.completion_tokens === 'number' ? row.completion_tokens : null,
    output_token_source: row.output_token_source ?? null,
  } as RequestRecord;
  const t = r.intended_ns ?? r.sent_ns;
  if (!(t >= window.start_s * 1e9 && t < window.end_s * 1e9)) return;
  acc.requests++;
  if (r.status !== 'ok') {
    acc.failed++;
    return;
  }
  const ttft = metricNs(r, sloTtftMetric(basis));
  if (ttft !== null) acc.ttftNs.push(ttft);
  const tpot = metricNs(r, 'tpot');
  if (tpot !== null) acc.tpotNs.push(tpot);
}

/** One figure: the value in ms, or on a failure (+∞, written as null with onFailure). */
export interface RankedFigure {
  ms: number | null;
  onFailure: boolean;
}

/**
 * The nearest-rank quantile q (rank ⌈q·n⌉) over the measured successes and the failures, the
 * failures ranked above every success (+∞). Successes the metric is not defined on (TPOT of a
 * 1-token answer) are not ranked: nothing is held against them.
 */
export function rankedQuantile(valuesNs: readonly number[], failed: number, q: number): RankedFigure {
  const n = valuesNs.length + failed;
  if (n === 0) return { ms: null, onFailure: false };
  const rank = Math.max(1, Math.ceil(q * n));
  if (rank > valuesNs.length) return { ms: null, onFailure: true };
  const sorted = [...valuesNs].sort((a, b) => a - b);
  return { ms: Math.round((sorted[rank - 1]! / 1e6) * 1000) / 1000, onFailure: false };
}
