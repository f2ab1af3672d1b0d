// run.json's definitions of the server-span figures (server_spans and the requests.ndjson fields
// the join adds): one sentence each.

const PART = (what: string): string =>
  `${what}, in ms; per class and window its p50 (_p50_ms) and p95 (_p95_ms) over the joined successful requests (nearest rank), null when no joined request carried it`;

/** One sentence for every figure of run.json `server_spans` and each new requests.ndjson field. */
export const SERVER_SPANS_DEFINITIONS: Record<string, string> = {
  server_spans:
    "present when the plan has `traces`: the server's OpenTelemetry request spans received by the coordinator (OTLP/HTTP and OTLP/gRPC), written to spans.ndjson, and joined to the requests by trace id (each request carried a W3C traceparent naming it) or by the request id the server records (gen_ai.request.id)",
  'server_spans.receiver':
    'export requests taken, spans taken, spans of this run by how they joined (by_trace_id, by_request_id), spans naming no request of this run (foreign), export requests refused by reason, and the ports the receiver listened on',
  'server_spans.requests_joined': 'successful requests with at least one server span, whose breakdown is in requests.ndjson',
  'server_spans.requests_without_span': 'rows of requests.ndjson no server span named (failed requests included)',
  'server_spans.clocks':
    "each service's clock (by service.name) in the run's clock domain: every joined request bounds its offset (the span started after the request left and before its first byte came back, and ended before its last byte came back); the line through every bound gives offset_ns (server minus run, at the middle of the run's requests), drift_ppm and drift_uncertainty_ppm; model 'constant' when the bounds cannot bound a drift (it is taken as none); kind 'inconsistent' when no line fits every bound",
  'server_spans.clocks.<service>.offset_uncertainty_ns':
    "the largest distance over the run between the fitted offset and any offset a line through every request's bound allows: the server's true offset lies within ± this, whatever the network's asymmetry",
  'server_spans.classes.<class>.windows.<window>.joined':
    'joined successful requests of the class whose send (intended send, rate models) falls in the window',
  'server_spans.classes.<class>.windows.<window>.ttft_p50':
    "the requests whose TTFT ranks between the 45th and 55th percentile of the joined ones (at least the p50's own), their parts averaged: where a typical request's time to first token went; ttft_ms is the p50's TTFT",
  'server_spans.classes.<class>.windows.<window>.ttft_p95':
    "the requests whose TTFT ranks between the 92.5th and 97.5th percentile of the joined ones (at least the p95's own), their parts averaged: where a slow request's time to first token went; ttft_ms is the p95's TTFT",
  'server_spans.classes.<class>.windows.<window>.where_ttft_went': "one sentence: the p95 band's TTFT and the largest part of it",
  'requests.ndjson span_joined_by':
    "how the request's server span was found: trace_id (the server continued its traceparent) or request_id (gen_ai.request.id); null when none was",
  'requests.ndjson span_trace_id': "the joined span's trace id (32 hex)",
  'requests.ndjson span_services':
    'the service.name of each joined span, comma-separated (a prefill and a decode instance in disaggregated serving)',
  'requests.ndjson span_start_unix_ns':
    "the (first) server span's start placed in the run's clock domain (its server stamp less the fitted offset), exact integer ns; null without a fitted offset",
  'requests.ndjson span_end_unix_ns': "the (last) server span's end in the run's clock domain, as span_start_unix_ns",
  'requests.ndjson span_offset_ns':
    "the fitted offset of the (first) span's server clock from the run's at the request's send, ns (server minus run)",
  'requests.ndjson span_offset_uncertainty_ns':
    'that service clock offset_uncertainty_ns: to_server_ms and from_server_ms are each known to ± this',
  'requests.ndjson to_server_ms': PART(
    'from the request leaving the client to the server span starting (network and gateway), with the fitted offset',
  ),
  'requests.ndjson queue_ms': PART("the server's gen_ai.latency.time_in_queue (of the prefill instance when disaggregated)"),
  'requests.ndjson prefill_ms': PART("the server's gen_ai.latency.time_in_model_prefill"),
  'requests.ndjson unaccounted_ms': PART(
    "the residual nobody accounts for: the server's gen_ai.latency.time_to_first_token less its queue and prefill (tokenising, scheduling, the first decode step)",
  ),
  'requests.ndjson handoff_ms': PART(
    "disaggregated serving: from the prefill instance's first token to the decode instance's (proxy hop, KV transfer, the decode instance's queue and first step), each on its own fitted clock",
  ),
  'requests.ndjson kv_transfer_ms': PART('the KV-cache transfer time the server reports (gen_ai.latency.kv_transfer), part of handoff_ms'),
  'requests.ndjson from_server_ms': PART(
    'from the first token leaving the server (its first-token event, else span start + time_to_first_token) to the client reading the first content (the stream back)',
  ),
  'requests.ndjson network_ms': PART(
    "to_server_ms + from_server_ms, which needs no clock offset: the client's TTFT less the server's time to first token (and the handoff)",
  ),
  'requests.ndjson decode_ms': PART("the server's gen_ai.latency.time_in_model_decode (of the decode instance when disaggregated)"),
  'requests.ndjson TTFT parts':
    "to_server_ms + queue_ms + prefill_ms + unaccounted_ms (+ handoff_ms) + from_server_ms is the request's TTFT (first_content − sent) exactly, within rounding to the µs",
};
