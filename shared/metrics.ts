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

/**
 * Where a request's completion_tokens came from: the server's usage, the agent's tokenizer over the
 * streamed text, or the count of streamed content and reasoning chunks (an estimate: a chunk may
 * hold several tokens).
 */
export type OutputTokenSource = 'usage' | 'tokenizer' | 'chunks';

/** Sources whose count is a token count (chunks are not), so per-token metrics may use them. */
export const EXACT_OUTPUT_SOURCES: readonly OutputTokenSource[] = ['usage', 'tokenizer'];

/** The canary check of one response (the single-client seed's `request_canary`). */
export interface CanaryResult {
  marker: string;
  passed: boolean;
  marker_at_start: boolean;
  /** Times the request's own marker appears in the response. */
  observed_marker_count: number;
  /** Other requests' markers in the response (reasoning included). */
  foreign_marker_count: number;
  /** False when the bounded capture missed part of the response. */
  capture_complete: boolean;
}

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
  /**
   * How late first_content_ns may be: a bound on how long its bytes waited unread
   * (agent/loop-busy.ts; absent from records of older agents).
   */
  first_content_uncertainty_ns?: number | null;
  last_token_ns: number | null;
  done_ns: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** Where completion_tokens came from (null while no output was counted). */
  output_token_source: OutputTokenSource | null;
  cached_tokens: number | null;
  reasoning_chunks: number;
  content_chunks: number;
  /** The canary check, for classes with prompt.canary whose response streamed cleanly; else null. */
  canary: CanaryResult | null;
  retry_after_s: number | null;
  dropped_reason: string | null;
  error: string | null;
  /** Model `sessions` only: the session (its index in the class) and the turn, from 1. */
  session_id?: number;
  /** api "embeddings" only: the inputs the request carried (its batch size). */
  inputs?: number;
  /** A class sending images only: the request body's size in bytes. */
  request_bytes?: number;
  /** A class with LoRA adapters only: the model name (adapter) the request named. */
  model?: string;
  /** A class offering tools only: arrival of the first tool-call delta (agent-local ns), its delta count, the calls, and whether every call's arguments parsed as JSON (null when the capture was incomplete). */
  first_tool_call_ns?: number | null;
  tool_call_chunks?: number;
  tool_calls?: number;
  tool_arguments_valid?: boolean | null;
  turn?: number;
  /**
   * How far the agent had slewed its run timeline back from its raw clock (agent/run.ts) at
   * sent_ns and at done_ns: a stamp plus its correction is the agent's raw clock reading (absent
   * from records of older agents; the done one null without done_ns).
   */
  clock_correction_ns?: number;
  clock_correction_done_ns?: number | null;
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
    first_content_uncertainty_ns: null,
    last_token_ns: null,
    done_ns: null,
    prompt_tokens: null,
    completion_tokens: null,
    output_token_source: null,
    cached_tokens: null,
    reasoning_chunks: 0,
    content_chunks: 0,
    canary: null,
    retry_after_s: null,
    dropped_reason: null,
    error: null,
  };
}

/** Latency distributions reported per class and window, all recorded in ns. */
export const LATENCY_METRICS = [
  'ttft',
  'ttfo',
  'tpot',
  'ntpot',
  'itl',
  'e2e',
  'e2e_from_intended',
  'ttft_from_intended',
  'schedule_lag',
  'visible_generation',
] as const;

/** Metrics measured from the intended send time: they exist only for open-loop classes. */
export const FROM_INTENDED_METRICS: readonly LatencyMetric[] = ['e2e_from_intended', 'ttft_from_intended'];

/** One of LATENCY_METRICS. */
export type LatencyMetric = (typeof LATENCY_METRICS)[number];

/** One-sentence definitions written into run.json's `timing_methodology`. */
export const TIMING_METHODOLOGY: Record<string, string> = {
  clock:
    'Every timestamp is the agent monotonic clock (hrtime; on the request path read as performance.now(), the same clock in float ms with ns resolution, mapped onto hrtime once within about 100 ns), anchored once to its wall clock at a millisecond edge, written as integer ns since the Unix epoch in the run clock domain.',
  intended: 'intended_unix_ns is the send time the global seeded schedule assigned to the request (open-loop classes only).',
  sent: 'sent_unix_ns is taken immediately before the request is handed to undici for writing.',
  headers: 'headers_unix_ns is taken when the response status line and headers have been parsed.',
  first_output:
    'first_output_unix_ns is the arrival of the first SSE event carrying a non-empty reasoning or content delta, timestamped at the byte level before any JSON parsing.',
  first_content: 'first_content_unix_ns is the arrival of the first SSE event carrying a non-empty content (or completions text) delta.',
  ttft_uncertainty:
    "first_content_uncertainty_ns estimates how long the first token's bytes may have waited unread before the agent stamped them: the smaller of the time its event loop had been busy since it last waited for I/O and the time since the end of the loop turn before the previous one that read a socket (whose poll would have read bytes already there); an estimate, not a bound: it cannot see the kernel's wake-up or time the process spent waiting for a CPU (a contended host), so each agent's self-test states its measured coverage (self_test.uncertainty_coverage: the share of stamp errors within it + 0.5 ms); ttft_uncertainty_p99_ms is its p99 over successful requests.",
  ttft: 'ttft is first_content − sent for successful requests.',
  ttfo: 'ttfo (time to first output) is first_output − sent for successful requests; it includes reasoning.',
  tpot: 'tpot is (done − first_output) / (completion_tokens − 1) for successful requests with at least 2 completion tokens counted by the server usage or a tokenizer (never from chunk counts, which are not token counts).',
  ntpot:
    'ntpot (GuideLLM-style time per output token) is e2e / completion_tokens for successful requests whose completion_tokens came from the server usage or a tokenizer (never from chunk counts).',
  output_token_source:
    'output_token_source says where a request completion_tokens came from: usage (the server usage event), tokenizer (the streamed text counted with the tokenizer the plan names) or chunks (streamed content plus reasoning chunks, an estimate, since a chunk may hold several tokens).',
  itl: 'itl is every gap between consecutive content-chunk arrivals, pooled over successful requests (a chunk may hold several tokens).',
  e2e: 'e2e is done − sent for successful requests.',
  visible_generation:
    'visible_generation (the single-client seed visible_generation_ms) is done − first_content for successful requests: how long the visible answer took to stream, e2e − ttft; on a reasoning model it leaves the reasoning out.',
  e2e_from_intended:
    'e2e_from_intended is done − intended for successful open-loop requests: the latency a user felt, immune to coordinated omission.',
  ttft_from_intended:
    'ttft_from_intended is first_content − intended for successful open-loop requests: time to first token as the user felt it, including any wait the client itself added before sending (immune to coordinated omission).',
  schedule_lag: 'schedule_lag is sent − intended for every dispatched open-loop request, successful or not.',
  decode_tok_s_p50: 'decode_tok_s_p50 is 1e9 / tpot_p50 in ns, the median per-request decode rate in tokens per second.',
  throughput_tok_s:
    'throughput_tok_s is the sum of completion tokens of successful requests in the window divided by the window length (chunk estimates included where the server sent no usage; metric_population.output_token_sources says how many).',
  throughput_rps: 'throughput_rps is the number of successful requests of the window that finished inside it divided by the window length.',
  slo_attainment:
    'slo_attainment is the share of the window attempted requests that succeeded and met every per-request latency bound the class declares, the TTFT bound on ttft or, with slo.basis "intended", on ttft_from_intended (429, 5xx, timeouts and other failures count as misses; a bound a request cannot be measured on, TPOT without 2 counted output tokens, is not held against it).',
  window_membership:
    'A request belongs to a window by its intended send time (open loop) or its send time (closed loop), in seconds from the run start.',
  percentiles:
    'Percentiles are nearest rank (rank ceil(q·n)) read from HDR histograms merged across agents by addition (never averaged), reported as the median equivalent value of the bucket.',
  request_canaries:
    'with prompt.canary each prompt begins with its own marker (<RUN>_REQ_<seed>_<i:05d>) and ends asking the model to begin its answer with it; a response passes when its visible output begins with that marker and no other request marker appears anywhere in it (reasoning included); the capture is bounded and an incomplete capture fails closed; failed canaries keep their timings in requests.ndjson (status canary_failed) and are excluded from performance distributions.',
  closed_loop:
    'Classes with closed_loop true keep a target number of requests in flight; their latencies are closed-loop and have no intended time.',
};

/** The ns value of `metric` for a successful record, or null where it is not defined. ITL is recorded separately. */
export function metricNs(r: RequestRecord, metric: Exclude<LatencyMetric, 'itl'>): number | null {
  if (metric === 'schedule_lag') return r.intended_ns === null ? null : r.sent_ns - r.intended_ns;
  if (r.status !== 'ok' || r.done_ns === null) return null;
  // Per-token figures need a token count; a chunk count is not one.
  const ct = r.output_token_source !== null && EXACT_OUTPUT_SOURCES.includes(r.output_token_source) ? (r.completion_tokens ?? 0) : 0;
  switch (metric) {
    case 'ttft':
      return r.first_content_ns === null ? null : r.first_content_ns - r.sent_ns;
    case 'ttfo':
      return r.first_output_ns === null ? null : r.first_output_ns - r.sent_ns;
    case 'e2e':
      return r.done_ns - r.sent_ns;
    case 'visible_generation':
      return r.first_content_ns === null ? null : r.done_ns - r.first_content_ns;
    case 'e2e_from_intended':
      return r.intended_ns === null ? null : r.done_ns - r.intended_ns;
    case 'ttft_from_intended':
      return r.intended_ns === null || r.first_content_ns === null ? null : r.first_content_ns - r.intended_ns;
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
