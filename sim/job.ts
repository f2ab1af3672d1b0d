// What a request asks of an engine, and the interface both engines (the simple v1 timing model
// and the vLLM replica model) offer to the HTTP layer, the gateway and the offline fit.
import type { AbortReason, FinishReason } from './metrics.js';

/** One generation an engine runs; callbacks write the response. */
export interface EngineJob {
  /** Tokens to prefill, which lengthens the time to first token. */
  promptTokens: number;
  /** Tokens to emit before finishing (at least 1). */
  outputTokens: number;
  /** Reason recorded when all tokens are out. */
  finishReason: FinishReason;
  /** One pause of `ms` after `afterTokens` tokens (0 = before the first). */
  pause?: { afterTokens: number; ms: number };
  /** Scheduling priority under `--scheduling priority`: higher runs first (the gateway's band values). */
  priority?: number;
  /** Chained hashes of the prompt's full 16-token blocks, for prefix caching; absent = never shared. */
  blockHashes?: readonly number[];
  /** Set by a prefix-caching engine when it first admits the job: prompt tokens found in the cache (usage.prompt_tokens_details.cached_tokens). */
  cachedTokens?: number;
  /** Disaggregated serving: prompt tokens whose KV arrived from a prefill replica, not computed here. */
  remoteKvTokens?: number;
  /** Present only when spans are sent: the engine notes the request's journey into it (journey.ts). */
  trace?: JobTrace;
  /** The token with this 0-based index is due now. */
  onToken(index: number): void;
  /** The last token is out. */
  onFinish(): void;
}

/** Where a submitted job stands; pass it back to cancel it. */
export interface EngineTicket {
  readonly state: 'waiting' | 'running' | 'done' | 'cancelled';
}

/** An engine: accepts jobs, runs them in (real or virtual) time, reports its queue depths. */
export interface SimEngine {
  /** Requests generating now. */
  readonly runningCount: number;
  /** Requests queued for a slot. */
  readonly waitingCount: number;
  /** Share of the KV cache in use, 0–1. */
  readonly kvUsage: number;
  /** Queues a job. */
  submit(job: EngineJob): EngineTicket;
  /** Removes a waiting or running job at once; a no-op for finished ones. */
  cancel(ticket: EngineTicket, reason: AbortReason): void;
  /** Cancels everything and stops; later submissions are cancelled on arrival. */
  stop(): void;
  /** Forgets every cached prefix (engines with a prefix cache); returns the blocks forgotten. */
  resetPrefixCache?(): number;
}

/** A transition of a request inside one replica, named as vLLM's journey events are. */
export type JourneyEventType = 'QUEUED' | 'SCHEDULED' | 'FIRST_TOKEN' | 'PREEMPTED' | 'FINISHED';

/** One journey event: when (the engine clock's monotonic seconds) and how far the request had got. */
export interface JourneyEvent {
  type: JourneyEventType;
  atS: number;
  /** Prompt tokens whose KV was computed (or received) by then. */
  prefillDone: number;
  /** Output tokens emitted by then. */
  decodeDone: number;
  /** The engine step it happened in (vLLM model only). */
  step?: number;
  /** SCHEDULED only: the first time, or again after a preemption. */
  kind?: 'FIRST' | 'RESUME';
}

/** What one request's span is built from, filled in by the engines while it runs. */
export interface JobTrace {
  /** The journey on the replica that answers (the decode replica when disaggregated). */
  journey: JourneyEvent[];
  /** Disaggregated serving: the prefill replica's part. */
  prefill?: { arrivalS: number; journey: JourneyEvent[] };
  /** Disaggregated serving: when the request reached its decode replica, and how long its KV took to arrive. */
  decode?: { arrivalS: number; kvTransferS: number };
}

/** Notes a journey event on a traced job (a no-op for an untraced one). */
export function note(job: EngineJob, event: JourneyEvent): void {
  job.trace?.journey.push(event);
}
