// Pure: the names of the compared figures, as comparison.json and --gate-on spell them.
import { boundQuantiles, latencyBoundOf, quantileLabel } from '../../shared/slo-bounds.js';

/** p50, p95, p99 and every quantile an SLO bound of the table judges, ascending. */
export const COMPARED_QUANTILES: readonly number[] = [...new Set([0.5, 0.95, 0.99, ...boundQuantiles()])].sort((a, b) => a - b);
export const successKey = 'success_rate';
export const goodputKey = 'goodput_rps';

/** e.g. ttft_p95_ms. */
export function quantileKey(metric: string, q: number): string {
  return `${metric}_${quantileLabel(q)}_ms`;
}

/** The p50, p95 and p99 figure names of a latency metric. */
export function latencyFigureKeys(metric: string): string[] {
  return COMPARED_QUANTILES.map((q) => quantileKey(metric, q));
}

/** Every compared figure name, in the order they are reported. */
export const FIGURE_NAMES: readonly string[] = [...['ttft', 'tpot', 'e2e', 'itl'].flatMap(latencyFigureKeys), successKey, goodputKey];

/** The compare figure an SLO bound is judged on (success_rate_min → success_rate); null for keys that are not bounds. */
export function sloFigure(sloKey: string): string | null {
  if (sloKey === 'success_rate_min') return successKey;
  // A latency bound is judged on the figure of its own name (ttft_p95_ms), a row of the SLO table.
  return latencyBoundOf(sloKey) ? sloKey : null;
}
