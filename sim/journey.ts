// The spans one request makes, as vLLM makes them, from what the engines noted while it ran: pure
// data, no OpenTelemetry here (tracing.ts sends it). Names and formulas follow vLLM:
// - the span `llm_request`, kind SERVER, from the request's arrival to its last token, parented on
//   the incoming W3C traceparent (vllm/v1/engine/output_processor.py do_tracing);
// - the attributes of vllm/tracing SpanAttributes, in seconds: time_in_queue = scheduled − queued,
//   time_to_first_token = first token − arrival, time_in_model_prefill = first token − scheduled,
//   time_in_model_decode = last token − first token, time_in_model_inference = last token −
//   scheduled, e2e = finished − arrival (so e2e is the span's duration);
// - the journey events of vLLM's journey tracing (`journey.QUEUED`, `journey.SCHEDULED`,
//   `journey.FIRST_TOKEN`, `journey.PREEMPTED`, `journey.FINISHED`) with its event attributes
//   (event.type, ts.monotonic, scheduler.step, phase, prefill.done_tokens, prefill.total_tokens,
//   decode.done_tokens, decode.max_tokens, num_preemptions, schedule.kind, finish.status). vLLM
//   puts them on a child `llm_core` span; here they sit on `llm_request`, one span per replica.
// Disaggregated serving has no standard names yet, so two are ours: `kv_transfer.role`
// (`kv_producer` on the prefill replica's span, `kv_consumer` on the decode replica's, vLLM's
// kv_role values) and `gen_ai.latency.kv_transfer` (seconds the KV took to reach the decode replica).

import type { JobTrace, JourneyEvent } from './job.js';
import type { FinishReason } from './metrics.js';

/** A parent span context read from a `traceparent` header. */
export interface ParentContext {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

/** Reads a W3C `traceparent` (version 00 or a later one read as 00); undefined when it is not one. */
export function parseTraceparent(header: string | undefined): ParentContext | undefined {
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/.exec(header?.trim() ?? '');
  if (!m || m[1] === 'ff' || (m[1] === '00' && m[5] !== undefined)) return undefined;
  const [traceId, spanId] = [m[2]!, m[3]!];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(m[4]!, 16) & 1) === 1 };
}

/** One finished request as the spans need it. */
export interface RequestRecord {
  parent: ParentContext | undefined;
  /** `x-request-id` when the client sent one, else the id the response carries. */
  requestId: string;
  /** The id the response carries (`chatcmpl-…`). */
  responseId: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  maxTokens: number;
  finishReason: FinishReason;
  /** When the request was handed to a replica (after any gateway queue), monotonic seconds. */
  arrivalS: number;
  trace: JobTrace;
}

/** A span ready to send: times in monotonic seconds of the engine clock. */
export interface SpanData {
  name: 'llm_request';
  startS: number;
  endS: number;
  attributes: Record<string, string | number>;
  events: { name: string; atS: number; attributes: Record<string, string | number> }[];
}

// vLLM's finish.status of its two normal endings (RequestStatus FINISHED_STOPPED, FINISHED_LENGTH_CAPPED).
const FINISH_STATUS: Record<FinishReason, string> = { stop: 'stopped', length: 'length' };

/** The spans of a finished request (one, or two when disaggregated); none if it never finished. */
export function spansOf(r: RequestRecord): SpanData[] {
  const decode = replicaSpan(r, r.trace.decode?.arrivalS ?? r.arrivalS, r.trace.journey, r);
  if (!decode) return [];
  if (!r.trace.prefill || !r.trace.decode) return [decode];
  decode.attributes['kv_transfer.role'] = 'kv_consumer';
  decode.attributes['gen_ai.latency.kv_transfer'] = r.trace.decode.kvTransferS;
  // The prefill replica is asked for one token, the one that ends its prefill, as in llm-d's P/D split.
  const prefill = replicaSpan(r, r.trace.prefill.arrivalS, r.trace.prefill.journey, {
    completionTokens: 1,
    maxTokens: 1,
    finishReason: 'length',
  });
  if (!prefill) return [decode];
  prefill.attributes['kv_transfer.role'] = 'kv_producer';
  return [prefill, decode];
}

type Answer = Pick<RequestRecord, 'completionTokens' | 'maxTokens' | 'finishReason'>;

function replicaSpan(r: RequestRecord, arrivalS: number, journey: readonly JourneyEvent[], answer: Answer): SpanData | undefined {
  const at = (type: JourneyEvent['type']): number | undefined => journey.find((e) => e.type === type)?.atS;
  const [queued, scheduled, firstToken, finished] = [at('QUEUED'), at('SCHEDULED'), at('FIRST_TOKEN'), at('FINISHED')];
  if (queued === undefined || scheduled === undefined || firstToken === undefined || finished === undefined) return undefined;
  const attributes: Record<string, string | number> = {
    'gen_ai.request.id': r.requestId,
    'gen_ai.response.id': r.responseId,
    'gen_ai.response.model': r.model,
    'gen_ai.request.max_tokens': answer.maxTokens,
    'gen_ai.usage.prompt_tokens': r.promptTokens,
    'gen_ai.usage.completion_tokens': answer.completionTokens,
    'gen_ai.latency.time_in_queue': scheduled - queued,
    'gen_ai.latency.time_to_first_token': firstToken - arrivalS,
    'gen_ai.latency.time_in_model_prefill': firstToken - scheduled,
    'gen_ai.latency.time_in_model_decode': finished - firstToken,
    'gen_ai.latency.time_in_model_inference': finished - scheduled,
    'gen_ai.latency.e2e': finished - arrivalS,
  };
  let preemptions = 0;
  const events = journey.map((e) => {
    if (e.type === 'PREEMPTED') preemptions += 1;
    const a: Record<string, string | number> = {
      'event.type': e.type,
      'ts.monotonic': e.atS,
      phase: e.type === 'QUEUED' ? 'WAITING' : e.decodeDone > 0 ? 'DECODE' : 'PREFILL',
      'prefill.done_tokens': e.prefillDone,
      'prefill.total_tokens': r.promptTokens,
      'decode.done_tokens': e.decodeDone,
      'decode.max_tokens': answer.maxTokens,
      num_preemptions: preemptions,
    };
    if (e.step !== undefined) a['scheduler.step'] = e.step;
    if (e.kind) a['schedule.kind'] = e.kind;
    if (e.type === 'FINISHED') a['finish.status'] = FINISH_STATUS[answer.finishReason];
    return { name: `journey.${e.type}`, atS: e.atS, attributes: a };
  });
  return { name: 'llm_request', startS: arrivalS, endS: finished, attributes, events };
}
