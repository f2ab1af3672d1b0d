// What the SLO table (slo-table.ts) gives the rest: its keys, quantiles and the bounds a class declares.
import { type LatencyBound, SLO_LATENCY_BOUNDS } from './slo-table.js';

export type { BoundedLatency, LatencyBound } from './slo-table.js';
export { SLO_LATENCY_BOUNDS } from './slo-table.js';

/** A latency bound's plan key. */
export type LatencyBoundKey = (typeof SLO_LATENCY_BOUNDS)[number]['key'];

/** The success-rate bound: completed / attempted requests of a window, at least this share. */
export const SUCCESS_BOUND = { key: 'success_rate_min', words: 'success' } as const;

/** Every criterion a verdict may hold: a latency bound's key or success_rate_min. */
export type SloCriterionKey = LatencyBoundKey | typeof SUCCESS_BOUND.key;

/** The table as rows (the type every reader iterates; a test may extend the table). */
export function latencyBounds(): readonly LatencyBound[] {
  return SLO_LATENCY_BOUNDS;
}

/** "p95", "p90", "p99_9": a quantile as figure names spell it (0.999 → p99_9). */
export function quantileLabel(q: number): string {
  return `p${Number((q * 100).toFixed(4))}`.replace('.', '_');
}

/** The quantiles the bounds judge, ascending, each once. */
export function boundQuantiles(): number[] {
  return [...new Set(latencyBounds().map((b) => b.quantile))].sort((a, b) => a - b);
}

/** The bound a class's slo declares for a row (undefined: not declared). */
export function boundOf(slo: object, row: LatencyBound): number | undefined {
  const v = (slo as Record<string, unknown>)[row.key];
  return typeof v === 'number' ? v : undefined;
}

/** The latency bounds a class's slo declares, with their values, in table order. */
export function declaredBounds(slo: object): { row: LatencyBound; bound: number }[] {
  return latencyBounds().flatMap((row) => {
    const bound = boundOf(slo, row);
    return bound === undefined ? [] : [{ row, bound }];
  });
}

/** Whether a key names a latency bound of the table. */
export function latencyBoundOf(key: string): LatencyBound | undefined {
  return latencyBounds().find((b) => b.key === key);
}
