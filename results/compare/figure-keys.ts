// Pure: the names of the compared figures, as comparison.json and --gate-on spell them.

export const COMPARED_QUANTILES = [0.5, 0.95, 0.99] as const;
export const successKey = 'success_rate';
export const goodputKey = 'goodput_rps';

/** e.g. ttft_p95_ms. */
export function quantileKey(metric: string, q: number): string {
  return `${metric}_p${Math.round(q * 100)}_ms`;
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
  return /^(ttft|tpot|e2e)_p95_ms$/.test(sloKey) ? sloKey : null;
}
