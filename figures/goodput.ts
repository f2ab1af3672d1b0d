// Pure: goodput, the rate of requests that were good for their user — succeeded and met every
// per-request bound their class declares (TTFT, TPOT, e2e). It answers "how much useful work per
// second", which the percentile verdict does not: a window can meet its p95 while a twentieth of
// its requests were too slow, and goodput counts only the others.

/** The window's goodput figures from its count of good requests that finished inside it (WindowStats.goodInside). */
export function goodputFigures(goodRequests: number, lengthS: number): { goodput_requests: number; goodput_rps: number | null } {
  // Rounded as throughput_rps is, so goodput ≤ throughput holds in the printed figures too.
  return { goodput_requests: goodRequests, goodput_rps: lengthS > 0 ? Math.round((goodRequests / lengthS) * 1000) / 1000 : null };
}

/** One sentence per goodput figure, for the definitions of every artifact that carries them. */
export const GOODPUT_DEFINITIONS: Record<string, string> = {
  goodput_requests:
    'requests of the window (by intended send time, or send time in a closed loop) that succeeded, finished inside the window and met every per-request bound the class SLO declares — TTFT, TPOT and e2e, each bound applied to the request itself (a bound a request cannot be measured on, TPOT of an output without 2 counted tokens or TTFT without a content token, is not held against it) — so 429, 5xx, timeouts and other failures never count; the requests counted are a subset of those throughput_rps counts, so goodput never exceeds throughput',
  goodput_rps:
    'goodput_requests divided by the window length in seconds (the whole run, drain included, for window all), the same basis as throughput_rps beside it: the rate of requests that were good for their user; it answers how much useful work per second was served, while the SLO verdict answers whether the p95 of the window held (a window can meet its p95 with a twentieth of its requests too slow, and those are not goodput)',
};
