// The server signals the analysis reads, each with every name it has gone by (domain.md §4):
// the current name first, then the older ones. A sample uses the first name it exposes, so a
// server that serves both (engine-sim does, for KV usage) is never counted twice.

/** vLLM requests in the running batch (gauge). */
export const VLLM_RUNNING = ['vllm:num_requests_running'];
/** vLLM requests waiting to be scheduled (gauge). */
export const VLLM_WAITING = ['vllm:num_requests_waiting'];
/** vLLM KV cache usage, 0–1 (gauge). */
export const VLLM_KV_USAGE = ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'];
/** vLLM preemptions (counter). */
export const VLLM_PREEMPTIONS = ['vllm:num_preemptions_total', 'vllm:num_preemptions'];
/** Prompt tokens looked up in vLLM's prefix cache (counter). */
export const VLLM_PREFIX_QUERIES = ['vllm:prefix_cache_queries_total', 'vllm:prefix_cache_queries'];
/** Prompt tokens found in vLLM's prefix cache (counter). */
export const VLLM_PREFIX_HITS = ['vllm:prefix_cache_hits_total', 'vllm:prefix_cache_hits'];
/** Speculative-decoding drafts proposed (counter; vLLM V1). */
export const VLLM_SPEC_DRAFTS = ['vllm:spec_decode_num_drafts_total', 'vllm:spec_decode_num_drafts'];
/** Draft tokens proposed by speculative decoding (counter). */
export const VLLM_SPEC_DRAFT_TOKENS = ['vllm:spec_decode_num_draft_tokens_total', 'vllm:spec_decode_num_draft_tokens'];
/** Draft tokens the target model accepted (counter). */
export const VLLM_SPEC_ACCEPTED = ['vllm:spec_decode_num_accepted_tokens_total', 'vllm:spec_decode_num_accepted_tokens'];
/** Requests queued in the gateway's flow control, by fairness_id and priority (gauge). */
export const EPP_QUEUE_SIZE = ['llm_d_epp_flow_control_queue_size', 'inference_extension_flow_control_queue_size'];
/** Time requests spent in flow control (histogram family; `_sum`/`_count` are read). */
export const EPP_QUEUE_DURATION = [
  'llm_d_epp_flow_control_request_queue_duration_seconds',
  'inference_extension_flow_control_request_queue_duration_seconds',
];
/** In-flight over max concurrency of the pool; ≥ 1 means full (gauge). */
export const EPP_POOL_SATURATION = ['llm_d_epp_flow_control_pool_saturation', 'inference_extension_flow_control_pool_saturation'];
/** A process's start time; more than one distinct value in a run means it restarted. */
export const PROCESS_START = ['process_start_time_seconds'];

/** Families kept in server-metrics.csv: the serving stack's own, plus restart detection. */
export function keptInCsv(name: string): boolean {
  return name.startsWith('vllm:') || name.startsWith('llm_d_') || name.startsWith('inference_') || name === 'process_start_time_seconds';
}
