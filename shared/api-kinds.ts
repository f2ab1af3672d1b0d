// What each API a plan can name measures, defined once for the agent (its adapters) and the
// coordinator (run.json's metric population). A streamed generation API has every latency metric;
// an API answered in one body (embeddings) has no first token, so no TTFT, TPOT or ITL.

import type { LatencyMetric } from './metrics.js';
import type { ApiKind } from './plan.js';

/** What the requests of one API can be measured by. */
export interface ApiMetrics {
  /** The response streams tokens as server-sent events (else it is one JSON body). */
  streamed: boolean;
  /** Latency metrics this API's requests can never have (they are absent, not zero). */
  notApplicable: readonly LatencyMetric[];
  /** One sentence for run.json saying why. */
  note: string;
}

const STREAMED: ApiMetrics = { streamed: true, notApplicable: [], note: 'streamed tokens: every latency metric applies' };

/** Every API by its plan name. */
export const API_METRICS: Record<ApiKind, ApiMetrics> = {
  chat: STREAMED,
  completions: STREAMED,
  responses: STREAMED,
  embeddings: {
    streamed: false,
    notApplicable: ['ttft', 'ttfo', 'tpot', 'ntpot', 'itl', 'visible_generation', 'ttft_from_intended'],
    note: 'an embeddings request is answered in one JSON body: it has no first token and generates none, so only e2e, e2e_from_intended and schedule_lag exist (with inputs and input tokens per second as its throughput)',
  },
  rerank: {
    streamed: false,
    notApplicable: ['ttft', 'ttfo', 'tpot', 'ntpot', 'itl', 'visible_generation', 'ttft_from_intended'],
    note: 'a rerank request (a query and a batch of documents) is answered in one JSON body of relevance scores: it has no first token and generates none, so only e2e, e2e_from_intended and schedule_lag exist (with documents and scored tokens per second as its throughput)',
  },
};

/** APIs whose request is a batch of inputs answered in one body (embeddings; rerank, whose inputs are documents). */
export function batchedApi(api: ApiKind): boolean {
  return api === 'embeddings' || api === 'rerank';
}

/**
 * The query of every rerank request: fixed, so each (query, document) pair costs the document's
 * tokens plus the same few (the server's pair template, separators included, is its own).
 */
export const RERANK_QUERY = 'Which passage is most relevant?';

/**
 * Whether the server renders a request of this API through the model's chat template before
 * tokenizing it (chat, and the Responses API whose `input` is a conversation), or tokenizes its
 * text as sent (completions' prompt, embeddings' inputs). Prompt counting (the tokenizer file,
 * the tokenize endpoint's two dialects) follows this, so a request is counted as it is served.
 */
export const CHAT_TEMPLATED: Record<ApiKind, boolean> = {
  chat: true,
  responses: true,
  completions: false,
  embeddings: false,
  rerank: false,
};

/** The latency metrics that exist for `api`. */
export function metricApplies(api: ApiKind, metric: LatencyMetric): boolean {
  return !API_METRICS[api].notApplicable.includes(metric);
}

/** The API a class sends to: its own, else the target's, else chat (the built-in simulator). */
export function classApi(cls: { api?: ApiKind }, target: { api: ApiKind } | undefined): ApiKind {
  return cls.api ?? target?.api ?? 'chat';
}

/**
 * The head of input `input` of an embeddings request: the request's head with `-input` appended,
 * so no input of a batch can be answered from another. The calibration counts these texts (the
 * suffix costs tokens on a real tokenizer: two on the tiny GGUF's BPE) and the adapter sends them.
 */
export function batchInputHead(head: string, input: number): string {
  return `${head}-${input}`;
}
