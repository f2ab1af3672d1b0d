// Human names, units and one-sentence definitions for the analysis' per-run figures
// (`realtime_surge_p95_ttft_ms`, `max_vllm_running`, …), so each experiment chart says what it plots.
import { COST_COLUMN_MEANINGS } from '../../figures/cost/arm-cost.js';

const WORDS: Record<string, string> = {
  ttft: 'TTFT',
  ttfo: 'TTFO',
  tpot: 'TPOT',
  ntpot: 'NTPOT',
  itl: 'ITL',
  e2e: 'e2e latency',
  epp: 'gateway (EPP)',
  vllm: 'vLLM',
  kv: 'KV',
};

const METRIC_MEANING: Record<string, string> = {
  ttft: 'time to first token (first content token − send)',
  ttfo: 'time to first output, reasoning included',
  tpot: 'time per output token after the first',
  ntpot: 'end-to-end latency divided by output tokens',
  itl: 'gap between content chunks',
  e2e: 'end-to-end latency ([DONE] − send)',
  latency: 'end-to-end latency ([DONE] − send)',
};

const FIXED: Record<string, string> = {
  ...COST_COLUMN_MEANINGS,
  max_vllm_running: 'the largest number of requests in vLLM’s running batch at any scrape of the run',
  max_vllm_waiting: 'the largest number of requests waiting in vLLM’s queue at any scrape of the run',
  max_vllm_kv_cache_usage_pct: 'the highest share of vLLM’s KV cache in use at any scrape of the run, in percent',
  vllm_preemptions_delta: 'vLLM preemptions during the run (last − first value of the counter)',
  max_epp_queue: 'the largest number of requests in the gateway’s flow-control queues, summed over tenants, at any scrape',
  max_pool_saturation: 'the highest gateway pool saturation at any scrape (1.0 or more means the pool was full)',
};

/** The unit a figure's name carries ('ms', '%', or '' for counts and ratios). */
export function figureUnit(key: string): string {
  return key.endsWith('_ms') ? 'ms' : key.endsWith('_pct') ? '%' : '';
}

/** "realtime_surge_p95_ttft_ms" → "realtime surge p95 TTFT". */
export function figureName(key: string): string {
  return key
    .replace(/_(ms|pct)$/, '')
    .split('_')
    .map((w) => WORDS[w] ?? w)
    .join(' ');
}

/** The axis title: name plus unit in brackets. */
export function figureAxisLabel(key: string): string {
  const unit = figureUnit(key);
  return unit ? `${figureName(key)} (${unit})` : figureName(key);
}

/** One sentence on what one run's value of this figure is. */
export function figureMeaning(key: string): string {
  if (FIXED[key]) return FIXED[key];
  const queue = /^(.+)_epp_queue_mean_ms$/.exec(key);
  if (queue) return `the mean time requests of class ${queue[1]} waited in the gateway’s flow-control queue`;
  const pct = /^(.+)_p(\d+)_([a-z0-9]+)_ms$/.exec(key);
  if (pct && METRIC_MEANING[pct[3]!])
    return `the p${pct[2]} (nearest rank) of ${METRIC_MEANING[pct[3]!]} over the successful requests of “${pct[1]!.replace(/_/g, ' ')}” (class and window)`;
  return `the run’s ${figureName(key)}`;
}
