// Pure: which request a server span belongs to, and where that request's time went. A span joins
// its request by its trace id (every request carries a traceparent naming it), or, from a server
// that does not continue the incoming trace, by the request id it records (`gen_ai.request.id`,
// which vLLM builds from the x-request-id header). The breakdown of the time to first token:
//   to_server   the request leaving the client → the server's span starting (network, gateway)
//   queue       gen_ai.latency.time_in_queue
//   prefill     gen_ai.latency.time_in_model_prefill
//   unaccounted the server's time to first token less queue and prefill (tokenising, scheduling,
//               the first decode step): what the server's attributes do not name
//   handoff     disaggregated serving only: the prefill instance's first token → the decode
//               instance's (proxy hop, KV transfer, the decode instance's queue and first step)
//   from_server the first token leaving the server → the client reading it
// They add up to the client's TTFT exactly; only the split of the network between to_server and
// from_server needs the server's clock offset (each carries its uncertainty), their sum does not.
import { requestOfRequestId } from '../../shared/prompt-text.js';
import { requestOfTraceId } from '../../shared/trace-context.js';
import type { OtlpAttributes, OtlpSpan } from './span.js';

/** Which request a span names, and how it was told. */
export interface SpanKey {
  classIndex: number;
  requestIndex: number;
  by: 'trace_id' | 'request_id';
}

/** The request a span of this run names, or null (another run's span, or one that names none). */
export function matchSpan(span: OtlpSpan, runTag: string, runId: string, classNames: readonly string[]): SpanKey | null {
  const byTrace = requestOfTraceId(runTag, span.traceId);
  if (byTrace && byTrace.classIndex < classNames.length) return { ...byTrace, by: 'trace_id' };
  const id = span.attributes['gen_ai.request.id'];
  const byId = typeof id === 'string' ? requestOfRequestId(runId, classNames, id) : null;
  return byId && { ...byId, by: 'request_id' };
}

/** A span that times a request (vLLM's and SGLang's `llm_request`, or any span with their latency attributes). */
export function timesRequest(span: { name: string; attributes: OtlpAttributes }): boolean {
  return span.name === 'llm_request' || typeof span.attributes['gen_ai.latency.time_to_first_token'] === 'number';
}

/** Which instance of a disaggregated deployment emitted a span: a role attribute, else its service name. */
export function spanRole(span: { attributes: OtlpAttributes; resource: OtlpAttributes }): 'prefill' | 'decode' | 'aggregate' {
  // vLLM's KV-transfer roles (kv_producer on the prefill instance, kv_consumer on the decode one),
  // as engine-sim's disaggregated mode states them.
  const kvRole = span.attributes['kv_transfer.role'];
  if (kvRole === 'kv_producer') return 'prefill';
  if (kvRole === 'kv_consumer') return 'decode';
  for (const v of [span.attributes['gen_ai.disaggregation.role'], span.resource['disaggregation.role'], span.resource['service.name']])
    if (typeof v === 'string') {
      if (/prefill/i.test(v)) return 'prefill';
      if (/decode/i.test(v)) return 'decode';
    }
  return 'aggregate';
}

/** One request span as spans.ndjson keeps it (times on the server's clock, latencies in seconds as sent). */
export interface RequestSpan {
  service: string;
  /** The clock it was stamped on (clock-key.ts): its server instance, else its service. */
  clock: string;
  role: 'prefill' | 'decode' | 'aggregate';
  startNs: bigint;
  endNs: bigint;
  /** gen_ai.latency.* attributes by their last name (time_in_queue, time_to_first_token, …), seconds. */
  latency: Record<string, number>;
  /** A first-token journey event, when the server sends one. */
  firstTokenNs: bigint | null;
}

/** The latency attributes of a span, by their last name. */
export function latencyOf(attributes: OtlpAttributes): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(attributes))
    if (k.startsWith('gen_ai.latency.') && typeof v === 'number' && Number.isFinite(v)) out[k.slice(15)] = v;
  return out;
}

/** The first token's instant on the server's clock: its journey event, else start + time_to_first_token. */
export function firstToken(s: RequestSpan): bigint | null {
  if (s.firstTokenNs !== null) return s.firstTokenNs;
  const ttft = s.latency.time_to_first_token;
  return ttft === undefined ? null : s.startNs + BigInt(Math.round(ttft * 1e9));
}

/** The client's stamps of one successful request, in the run's clock domain. */
export interface ClientStamps {
  sentNs: bigint;
  firstContentNs: bigint;
}

/** Where one request's time went (ms; null where its span did not say). */
export interface Breakdown {
  ttft_ms: number;
  to_server_ms: number | null;
  queue_ms: number | null;
  prefill_ms: number | null;
  unaccounted_ms: number | null;
  handoff_ms: number | null;
  kv_transfer_ms: number | null;
  from_server_ms: number | null;
  /** to_server + from_server: needs no clock offset. */
  network_ms: number | null;
  decode_ms: number | null;
}

/** The parts that add up to TTFT, in order (for the stacked bars). */
export const TTFT_PARTS = ['to_server_ms', 'queue_ms', 'prefill_ms', 'unaccounted_ms', 'handoff_ms', 'from_server_ms'] as const;

const ms = (ns: bigint | number): number => Math.round(Number(ns) / 1e3) / 1e3;
const sec = (v: number | undefined): number | null => (v === undefined ? null : Math.round(v * 1e6) / 1e3);

/**
 * The breakdown of one request from its spans (one, or a prefill and a decode span). `offsetNs`:
 * each span's service's clock minus the run's at this request (null when not fitted).
 */
export function breakdown(c: ClientStamps, spans: readonly RequestSpan[], offsetNs: (s: RequestSpan) => number | null): Breakdown | null {
  const prefill = spans.find((s) => s.role === 'prefill');
  const decode = spans.find((s) => s.role === 'decode');
  const disaggregated = prefill !== undefined && decode !== undefined;
  const first = disaggregated ? prefill : spans[0];
  const last = disaggregated ? decode : spans[0];
  if (!first || !last) return null;
  const firstOut = firstToken(first);
  const lastOut = firstToken(last);
  const ttftNs = c.firstContentNs - c.sentNs;
  const serverTtft = first.latency.time_to_first_token;
  // Offset-free: the client's TTFT less the server's, and in disaggregated serving the handoff.
  const handoffRaw = disaggregated && firstOut !== null && lastOut !== null ? { first: firstOut, last: lastOut } : null;
  const [oFirst, oLast] = [offsetNs(first), offsetNs(last)];
  const handoffNs = handoffRaw && oFirst !== null && oLast !== null ? Number(handoffRaw.last - handoffRaw.first) - (oLast - oFirst) : null;
  const toServer = oFirst === null ? null : Number(first.startNs - c.sentNs) - oFirst;
  const fromServer = lastOut === null || oLast === null ? null : Number(c.firstContentNs - lastOut) + oLast;
  const serverNs = serverTtft === undefined ? null : serverTtft * 1e9;
  const networkNs =
    serverNs === null
      ? null
      : disaggregated
        ? handoffNs === null
          ? null
          : Number(ttftNs) - serverNs - handoffNs
        : Number(ttftNs) - serverNs;
  const queue = first.latency.time_in_queue;
  const prefillS = first.latency.time_in_model_prefill;
  return {
    ttft_ms: ms(ttftNs),
    to_server_ms: toServer === null ? null : ms(toServer),
    queue_ms: sec(queue),
    prefill_ms: sec(prefillS),
    unaccounted_ms: serverTtft === undefined ? null : sec(serverTtft - (queue ?? 0) - (prefillS ?? 0)),
    handoff_ms: handoffNs === null ? null : ms(handoffNs),
    kv_transfer_ms: sec(decode?.latency.kv_transfer ?? prefill?.latency.kv_transfer),
    from_server_ms: fromServer === null ? null : ms(fromServer),
    network_ms: networkNs === null ? null : ms(networkNs),
    decode_ms: sec(last.latency.time_in_model_decode),
  };
}
