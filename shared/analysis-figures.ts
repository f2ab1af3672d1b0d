// The per-run figures of an experiment analysis (the columns of analysis.json `runs[]`), named as
// in the seed (`realtime_surge_p95_ttft_ms`, `batch_epp_queue_mean_ms`, `max_vllm_running`). Kept
// in shared/ because the experiment validator checks `compare.metric` against the same list the
// analysis writes, before any run starts.

/** Per class and window: the column suffix and the run.json `classes.<c>.windows.<w>` key it reads. */
export const CLASS_WINDOW_FIGURES = [
  { suffix: 'requests', source: 'requests' },
  { suffix: 'p95_ttft_ms', source: 'ttft_p95_ms' },
  { suffix: 'p99_ttft_ms', source: 'ttft_p99_ms' },
  { suffix: 'p95_tpot_ms', source: 'tpot_p95_ms' },
  { suffix: 'p99_tpot_ms', source: 'tpot_p99_ms' },
  { suffix: 'p95_latency_ms', source: 'e2e_p95_ms' },
  { suffix: 'p99_latency_ms', source: 'e2e_p99_ms' },
] as const;

/** Per class, read from run.json `server.windows.all`. */
export const CLASS_SERVER_FIGURE_SUFFIX = 'epp_queue_mean_ms';

/** Per run, read from run.json `server.windows.all` (the scrape contract's names). */
export const SERVER_FIGURES = [
  'max_epp_queue',
  'max_pool_saturation',
  'max_vllm_running',
  'max_vllm_waiting',
  'max_vllm_kv_cache_usage_pct',
  'vllm_preemptions_delta',
] as const;

/**
 * Per run, the budget figures read from run.json `cost.windows.all.total` (every class, the whole
 * run): an experiment may compare its arms on them (which configuration is cheaper per token).
 */
export const COST_FIGURES = [
  'output_tok_s',
  'input_tok_s',
  'output_tok_s_per_accelerator',
  'input_tok_s_per_accelerator',
  'output_tok_s_per_user',
  'usd_per_million_output_tokens',
  'usd_per_million_input_tokens',
] as const;

/** The window that always means the whole run. */
export const ALL_WINDOW = 'all';

/** Columns that are counts of one run (reported per run, never as a median across repeats). */
export function isCountColumn(column: string): boolean {
  return column.endsWith('_requests');
}

/** Every figure column for these classes and windows (`all` is added), in `runs[]` order. */
export function figureColumns(classes: readonly string[], windows: readonly string[]): string[] {
  const allWindows = [...windows.filter((w) => w !== ALL_WINDOW), ALL_WINDOW];
  const perWindow = classes.flatMap((c) => allWindows.flatMap((w) => CLASS_WINDOW_FIGURES.map((f) => `${c}_${w}_${f.suffix}`)));
  const perClass = classes.map((c) => `${c}_${CLASS_SERVER_FIGURE_SUFFIX}`);
  return [...perWindow, ...perClass, ...SERVER_FIGURES, ...COST_FIGURES];
}

/** The columns `compare.metric` may name: every figure but the counts. */
export function comparableColumns(classes: readonly string[], windows: readonly string[]): string[] {
  return figureColumns(classes, windows).filter((c) => !isCountColumn(c));
}
