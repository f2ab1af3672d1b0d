// The per-request metrics, defined once: the agent records them into histograms and the
// coordinator recomputes them from raw records to state the histograms' error. Every name here
// has its one-sentence definition in TIMING_METHODOLOGY, which run.json carries.

/** Outcome of one request (spec/artifacts.md; `malformed_stream` added for unparseable SSE). */
export type RequestStatus =
  | 'ok'
  | 'http_error'
  | 'timeout'
  | 'incomplete_stream'
  | 'missing_usage'
  | 'malformed_stream'
  | 'connect_error'
  | 'canary_failed'
  | 'aborted';

/** One request as an agent reports it; times are agent-local ns from the agent's start instant. */
export interface RequestRecord {
  class: string;
  request_index: number;
  status: RequestStatus;
  http_status: number | null;
  intended_ns: number | null;
  sent_ns: number;
  headers_ns: number | null;
  first_output_ns: number | null;
  first_content_ns: number | null;
  last_token_ns: number | null;
  done_ns: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  reasoning_chunks: number;
  content_chunks: number;
  retry_after_s: number | null;
  dropped_reason: string | null;
  error: string | null;
  /** Model `sessions` only: the session (its index in the class) and the turn, from 1. */
  session_id?: number;
  turn?: number;
}

/** A request's record before anything happened to it: `aborted` until an outcome is known. */
export function blankRecord(className: string, requestIndex: number, intendedNs: number | null): RequestRecord {
  return {
    class: className,
    request_index: requestIndex,
    status: 'aborted',
    http_status: null,
    intended_ns: intendedNs,
    sent_ns: 0,
    headers_ns: null,
    first_output_ns: null,
    first_content_ns: null,
    last_token_ns: null,
    done_ns: null,
    prompt_tokens: null,
    completion_tokens: null,
    cached_tokens: null,
    reasoning_chunks: 0,
    content_chunks: 0,
    retry_after_s: null,
    dropped_reason: null,
    error: null,
  };
}

/** Latency distributions reported per class and window, all recorded in ns. */
export const LATENCY_METRICS = ['ttft', 'ttfo', 'tpot', 'ntpot', 'itl', 'e2e', 'e2e_from_intended', 'schedule_lag'] as const;

/** One of LATENCY_METRICS. */
export type LatencyMetric = (typeof LATENCY_METRICS)[number];

/** One-sentence definitions written into run.json's `timing_methodology`. */
export const TIMING_METHODOLOGY: Record<string, string> = {
  clock:
    'Every timestamp is process.hrtime.bigint() on the agent, anchored once to its wall clock at a millisecond edge, written as integer ns since the Unix epoch in the run clock domain.',
  intended: 'intended_unix_ns is the send time the global seeded schedule assigned to the request (open-loop classes only).',
  sent: 'sent_unix_ns is taken immediately before the request is handed to undici for writing.',
  headers: 'headers_unix_ns is taken when the response status line and headers have been parsed.',
  first_output:
    'first_output_unix_ns is the arrival of the first SSE event carrying a non-empty reasoning or content delta, timestamped at the byte level before any JSON parsing.',
  first_content: 'first_content_unix_ns is the arrival of the first SSE event carrying a non-empty content (or completions text) delta.',
  done: 'done_unix_ns is the arrival of the `data: [DONE]` event (never the connection close).',
  ttft: 'ttft is first_content − sent for successful requests.',
  ttfo: 'ttfo (time to first output) is first_output − sent for successful requests; it includes reasoning.',
  tpot: 'tpot is (done − first_output) / (completion_tokens − 1) from the server usage, for successful requests with at least 2 completion tokens.',
  ntpot: 'ntpot (GuideLLM-style time per output token) is e2e / completion_tokens for successful requests.',
  itl: 'itl is every gap between consecutive content-chunk arrivals, pooled over successful requests (a chunk may hold several tokens).',
  e2e: 'e2e is done − sent for successful requests.',
  e2e_from_intended:
    'e2e_from_intended is done − intended for successful open-loop requests: the latency a user felt, immune to coordinated omission.',
  schedule_lag: 'schedule_lag is sent − intended for every dispatched open-loop request, successful or not.',
  decode_tok_s_p50: 'decode_tok_s_p50 is 1e9 / tpot_p50 in ns, the median per-request decode rate in tokens per second.',
  throughput_tok_s: 'throughput_tok_s is the sum of completion tokens of successful requests in the window divided by the window length.',
  throughput_rps: 'throughput_rps is the number of successful requests of the window that finished inside it divided by the window length.',
  slo_attainment:
    'slo_attainment is the share of the window attempted requests that succeeded and met every per-request latency bound the class declares (429, 5xx, timeouts and other failures count as misses).',
  window_membership:
    'A request belongs to a window by its intended send time (open loop) or its send time (closed loop), in seconds from the run start.',
  percentiles:
    'Percentiles are nearest rank (rank ceil(q·n)) read from HDR histograms merged across agents by addition (never averaged), reported as the median equivalent value of the bucket.',
  closed_loop:
    'Classes with closed_loop true keep a target number of requests in flight; their latencies are closed-loop and have no intended time.',
};

/** The ns value of `metric` for a successful record, or null where it is not defined. ITL is recorded separately. */
export function metricNs(r: RequestRecord, metric: Exclude<LatencyMetric, 'itl'>): number | null {
  if (metric === 'schedule_lag') return r.intended_ns === null ? null : r.sent_ns - r.intended_ns;
  if (r.status !== 'ok' || r.done_ns === null) return null;
  const ct = r.completion_tokens ?? 0;
  switch (metric) {
    case 'ttft':
      return r.first_content_ns === null ? null : r.first_content_ns - r.sent_ns;
    case 'ttfo':
      return r.first_output_ns === null ? null : r.first_output_ns - r.sent_ns;
    case 'e2e':
      return r.done_ns - r.sent_ns;
    case 'e2e_from_intended':
      return r.intended_ns === null ? null : r.done_ns - r.intended_ns;
    case 'tpot':
      return r.first_output_ns === null || ct < 2 ? null : (r.done_ns - r.first_output_ns) / (ct - 1);
    case 'ntpot':
      return ct < 1 ? null : (r.done_ns - r.sent_ns) / ct;
  }
}

/** The time (ns from the run start) that decides a record's window membership. */
export function windowTimeNs(r: RequestRecord): number {
  return r.intended_ns ?? r.sent_ns;
}

/** Window names that contain time `tNs` (ns from the run start), always starting with `all`. */
export function windowsAt(windows: readonly { name: string; start_s: number; end_s: number }[], tNs: number): string[] {
  const names = ['all'];
  for (const w of windows) if (tNs >= w.start_s * 1e9 && tNs < w.end_s * 1e9) names.push(w.name);
  return names;
}
