// The finished request a synthetic agent reports: one shape for the benches that feed a
// coordinator records without running real requests.
import type { RequestRecord } from '../shared/metrics.js';

/** A finished 128-token request shaped like a real one, the `i`-th of a synthetic agent's stream. */
export function row(i: number): RequestRecord {
  const sent = 1e9 + i * 1e6;
  const first = sent + 40e6 + (i % 17) * 1e6;
  const done = first + 127 * 20e6 + (i % 5) * 1e6;
  return {
    class: 'bench',
    request_index: i,
    status: 'ok',
    http_status: 200,
    intended_ns: null,
    sent_ns: sent,
    headers_ns: sent + 2e6,
    first_output_ns: first,
    first_content_ns: first,
    last_token_ns: done,
    done_ns: done,
    prompt_tokens: 16,
    completion_tokens: 128,
    output_token_source: 'usage',
    cached_tokens: null,
    reasoning_chunks: 0,
    content_chunks: 128,
    canary: null,
    retry_after_s: null,
    dropped_reason: null,
    error: null,
  };
}
