// The achieved throughput of a stage: successful requests of the class that *finished* inside the
// measured window, whatever their arrival time (the departure rate). run.json's throughput_rps counts
// only requests that also arrived in the window, which under a queue (and at the window's end, for
// any request still in flight) undercounts what the server delivered; so the stage reads its
// requests.ndjson, streaming, and counts departures itself.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { SloBasis } from '../../shared/plan.js';
import type { WindowLatencies } from './ranked-latency.js';
import { addLatencyRow, emptyLatencies } from './ranked-latency.js';

/** Departures of one class in [startNs, endNs) (unix ns as numbers: sub-µs rounding is irrelevant here). */
export interface Departures {
  requests: number;
  completionTokens: number;
}

/** Counts one row (a parsed requests.ndjson line) into `acc` when it departed in the window. */
export function countDeparture(acc: Departures, row: Record<string, unknown>, cls: string, startNs: number, endNs: number): void {
  if (row.class !== cls || row.status !== 'ok') return;
  const done = Number(row.done_unix_ns);
  if (!(done >= startNs && done < endNs)) return;
  acc.requests++;
  acc.completionTokens += typeof row.completion_tokens === 'number' ? row.completion_tokens : 0;
}

/** A stage's departures and, in one pass over the same file, its window's latencies with failures ranked (ranked-latency.ts). */
export async function readStageRequests(
  path: string,
  cls: string,
  runStartNs: number,
  measure: { start_s: number; end_s: number },
  basis: SloBasis,
): Promise<{ departures: Departures; latencies: WindowLatencies }> {
  const departures: Departures = { requests: 0, completionTokens: 0 };
  const latencies = emptyLatencies();
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.length === 0) continue;
    const row = JSON.parse(line) as Record<string, unknown>;
    countDeparture(departures, row, cls, runStartNs + measure.start_s * 1e9, runStartNs + measure.end_s * 1e9);
    addLatencyRow(latencies, row, cls, runStartNs, measure, basis);
  }
  return { departures, latencies };
}
