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
    "each server clock in the run's clock domain, one per server instance: keyed by service.instance.id, else host.name (the key is service.name@instance), else by service.name alone (its caveat says so: several instances under one name would be fitted as one clock); service, instance and keyed_by say which. Every joined request bounds the clock's offset θ = server − run, each bound at its own instant, exactly for a clock that drifts linearly: θ(sent) ≤ span start − sent, θ(headers) ≥ span start − headers, θ(first content) ≥ first token − first content, and, for a span that names no first token, θ(last byte) ≥ span end − last byte; the lines through every bound form a convex polygon of (offset, drift). model 'line' when the bounds bound the drift both ways, 'drift-unbounded' when not (the offset is then stated for any drift within ±drift_limit_ppm); kind 'inconsistent' when no line passes the bounds even with each widened by half of a 1 ms crossing",
  'server_spans.clocks.<clock>.offset_ns':
    "the fitted offset (server minus run) at the middle of the joined requests' instants, from the first send to the last byte: the line whose offset at each end of that stretch is the middle of what the polygon allows there (or, when that line is not itself in the polygon, the mean of the polygon's vertices)",
  'server_spans.clocks.<service>.offset_uncertainty_ns':
    "the largest distance, from the first request's send to the last one's last byte, between the fitted offset and any offset a line through the bounds allows (exact: at the polygon's vertices), plus slack_ns: the server's true offset lies within ± this whatever the network's asymmetry, as long as its spans start between the request's departure and its response's headers and its first token leaves before the client reads it",
  'server_spans.clocks.<clock>.drift_ppm':
    'the middle of the drifts (server clock rate against the run clock, ppm, positive: the server runs fast) the polygon allows; null when the bounds do not bound it (drift_bounded false): never 0 for unknown',
  'server_spans.clocks.<clock>.drift_uncertainty_ppm':
    'half the range of the drifts allowed (widened by 2 × slack_ns over the stretch); null when unbounded',
  'server_spans.clocks.<clock>.drift_range_ppm':
    'the lowest and highest drift the bounds allow, an unbounded side clipped to ± drift_limit_ppm (the largest drift taken for any clock: 1%)',
  'server_spans.clocks.<clock>.slack_ns':
    "how far each bound was widened for a line to pass them all: 0 when one already does; else the least such widening (half the bounds' crossing), up to 0.5 ms, which offset_uncertainty_ns includes",
  'server_spans.clocks.<clock>.bounds_crossing':
    "when slack_ns > 0: the bounds that cross, at the fitted drift, the other side's tightest — lower bounds above the lowest upper bound, or upper bounds below the highest lower bound, whichever are fewer (the few that disagree with the rest: spans stamped a little early or late, a clock that wobbled); bounds_crossing_max_ns is the largest crossing (about twice slack_ns); 0 when no slack was needed",
  'server_spans.clocks.<clock>.end_bounds_crossing':
    "spans that name their first token and end after the client read the response's last byte (their end above every offset the fit allows at that instant; end_bounds_crossing_max_ns by how much at most): an HTTP server span that ends after its last write. Such end bounds are only checked, never used: one that does not cross can be as false",
  'server_spans.clocks.<clock>.bounds':
    'how many bounds of each kind the joined requests gave: sent, headers, first_token, end (spans naming no first token: in the fit), end_checked (only checked); the fit keeps the tightest of each kind per 1/256 of the run',
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
  'requests.ndjson span_end_unix_ns':
    "the (last) server span's end in the run's clock domain: its server stamp less its clock's fitted offset at the request's last byte (a drifting clock moves over a long request)",
  'requests.ndjson span_offset_ns':
    "the fitted offset of the (first) span's server clock from the run's at the request's send, ns (server minus run)",
  'requests.ndjson span_offset_uncertainty_ns':
    "how far the (first) span's clock's true offset at the request's send can be from span_offset_ns: the largest distance to the lowest and highest offset any line through its clock's bounds takes at that instant (exact, at the polygon's vertices), plus the clock's slack_ns; at most its clock's offset_uncertainty_ns. to_server_ms and from_server_ms are each known to ± this",
  'requests.ndjson span_clocks': "the key in server_spans.clocks of each joined span's clock, comma-separated",
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
