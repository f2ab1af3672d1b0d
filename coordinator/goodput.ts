// Pure: goodput, the rate of requests that were good for their user — succeeded and met every
// per-request bound their class declares (TTFT, TPOT, e2e). It answers "how much useful work per
// second", which the percentile verdict does not: a window can meet its p95 while a twentieth of
// its requests were too slow, and goodput counts only the others.

/** The window's goodput figures from its count of requests meeting every bound (WindowStats.sloHits). */
export function goodputFigures(goodRequests: number, lengthS: number): { goodput_requests: number; goodput_rps: number | null } {
  return { goodput_requests: goodRequests, goodput_rps: lengthS > 0 ? goodRequests / lengthS : null };
}

/** One sentence per goodput figure, for the definitions of every artifact that carries them. */
export const GOODPUT_DEFINITIONS: Record<string, string> = {
  goodput_requests:
    'requests of the window (by intended send time, or send time in a closed loop) that succeeded and met every per-request bound the class SLO declares — TTFT, TPOT and e2e, each bound applied to the request itself — so 429, 5xx, timeouts and other failures never count',
  goodput_rps:
    'goodput_requests divided by the window length in seconds (the whole run, drain included, for window all): the rate of requests that were good for their user, beside throughput_rps; it answers how much useful work per second was served, while the SLO verdict answers whether the p95 of the window held (a window can meet its p95 with a twentieth of its requests too slow, and those are not goodput)',
};
