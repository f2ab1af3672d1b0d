// What each API a plan can name measures and takes, read from its module's descriptor
// (shared/apis/registry.ts), for the agent (its adapters) and the coordinator (run.json's metric
// population, prompt counting). A streamed generation API has every latency metric; an API
// answered in one body (embeddings) has no first token, so no TTFT, TPOT or ITL.
import type { ApiMetrics } from './apis/contract.js';
import { apiDescriptor } from './apis/registry.js';
import type { LatencyMetric } from './metrics.js';
import type { ApiKind } from './plan.js';

export type { ApiMetrics } from './apis/contract.js';
export { batchInputHead } from './apis/contract.js';
export { RERANK_QUERY } from './apis/rerank.js';

/** What the requests of `api` can be measured by. */
export function apiMetrics(api: ApiKind): ApiMetrics {
  return apiDescriptor(api).metrics;
}

/** APIs whose request is a batch of inputs answered in one body (embeddings; rerank, whose inputs are documents). */
export function batchedApi(api: ApiKind): boolean {
  return apiDescriptor(api).batched;
}

/**
 * Whether the server renders a request of this API through the model's chat template before
 * tokenizing it (chat, and the Responses API whose `input` is a conversation), or tokenizes its
 * text as sent (completions' prompt, embeddings' inputs). Prompt counting (the tokenizer file,
 * the tokenize endpoint's two dialects) follows this, so a request is counted as it is served.
 */
export function chatTemplated(api: ApiKind): boolean {
  return apiDescriptor(api).chatTemplated;
}

/** The latency metrics that exist for `api`. */
export function metricApplies(api: ApiKind, metric: LatencyMetric): boolean {
  return !apiMetrics(api).notApplicable.includes(metric);
}

/** The API a class sends to: its own, else the target's, else chat (the built-in simulator). */
export function classApi(cls: { api?: ApiKind }, target: { api: ApiKind } | undefined): ApiKind {
  return cls.api ?? target?.api ?? 'chat';
}
