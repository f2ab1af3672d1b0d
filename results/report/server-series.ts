// Server signals over time from server-metrics.csv (long format: elapsed_s, unix_ns, source,
// metric, labels_json, value). Each concept accepts vLLM's and llm-d's current and older names
// (domain.md §4); within one scrape of one source the series (pods, fairness ids, priorities) are
// summed, so a point is "the total at that instant". Sources stay separate lines: scrapes of two
// sources happen at different instants, and adding them point by point would mix times.

import { EPP_POOL_SATURATION, EPP_QUEUE_SIZE, VLLM_KV_USAGE, VLLM_RUNNING, VLLM_WAITING } from '../../figures/server/names.js';
import { num, parseCsv } from '../../shared/csv.js';

/** A server signal the report plots. */
export type ServerConcept = 'running' | 'waiting' | 'kv_cache_pct' | 'pool_saturation' | 'gateway_queue';

/** Metric names per concept, current name first; a source's first name present is the one used. */
export const SERVER_METRIC_NAMES: Record<ServerConcept, readonly string[]> = {
  running: VLLM_RUNNING,
  waiting: VLLM_WAITING,
  kv_cache_pct: VLLM_KV_USAGE,
  pool_saturation: EPP_POOL_SATURATION,
  gateway_queue: EPP_QUEUE_SIZE,
};

// KV cache usage is exported as a 0–1 fraction; the report shows percent, as run.json does.
const FACTOR: Partial<Record<ServerConcept, number>> = { kv_cache_pct: 100 };

/** One source's line for one concept. */
export interface SourceSeries {
  source: string;
  /** The metric name that was found (shows which generation of names the server exports). */
  metric: string;
  /** [elapsed_s, summed value] in scrape order. */
  points: [number, number][];
}

/** Every concept's lines, one per source that exported it. */
export function serverSeries(csvText: string): Map<ServerConcept, SourceSeries[]> {
  const rows = parseCsv(csvText);
  // source → metric → unix_ns → { elapsed, sum }
  const sums = new Map<string, Map<string, Map<string, { x: number; sum: number }>>>();
  for (const r of rows) {
    const x = num(r.elapsed_s);
    const v = num(r.value);
    if (x === null || v === null || !r.metric || !r.source) continue;
    const byMetric = sums.get(r.source) ?? new Map<string, Map<string, { x: number; sum: number }>>();
    sums.set(r.source, byMetric);
    const byTime = byMetric.get(r.metric) ?? new Map<string, { x: number; sum: number }>();
    byMetric.set(r.metric, byTime);
    const key = r.unix_ns || String(x);
    const cell = byTime.get(key);
    if (cell) cell.sum += v;
    else byTime.set(key, { x, sum: v });
  }
  const out = new Map<ServerConcept, SourceSeries[]>();
  for (const [concept, names] of Object.entries(SERVER_METRIC_NAMES) as [ServerConcept, readonly string[]][]) {
    const lines: SourceSeries[] = [];
    for (const [source, byMetric] of [...sums].sort(([a], [b]) => a.localeCompare(b))) {
      const metric = names.find((n) => byMetric.has(n));
      if (!metric) continue;
      const f = FACTOR[concept] ?? 1;
      const points = [...byMetric.get(metric)!.values()].map((c): [number, number] => [c.x, c.sum * f]).sort((a, b) => a[0] - b[0]);
      lines.push({ source, metric, points });
    }
    if (lines.length > 0) out.set(concept, lines);
  }
  return out;
}
