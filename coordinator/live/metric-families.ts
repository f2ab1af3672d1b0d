// What the coordinator's /metrics endpoint exports, built from a live snapshot: client-side
// counters per class, per-agent health gauges, and TTFT / TPOT / e2e as Prometheus histograms in
// seconds with vLLM's bucket bounds, so a dashboard can put `loadfleet_time_to_first_token_seconds`
// beside `vllm:time_to_first_token_seconds`. Every HELP line is the figure's one-sentence definition.
import type { MetricFamily } from './exposition.js';
import { histogramSeries } from './exposition.js';
import type { LiveMetric, LiveSnapshot } from './state.js';
import { LIVE_METRICS, RECENT_S } from './state.js';

/**
 * Upper bounds in seconds: vLLM's own for each metric (vllm/v1/metrics/loggers.py), so client
 * and server quantiles are estimated from the same buckets. TPOT adds four finer bounds below
 * vLLM's first (10 ms) because decode steps are often faster; vLLM's bounds remain a subset.
 */
export const BUCKETS_S: Record<LiveMetric, readonly number[]> = {
  ttft: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560],
  tpot: [0.001, 0.0025, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80],
  e2e: [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680],
};

const HISTOGRAMS: Record<LiveMetric, { name: string; help: string }> = {
  ttft: {
    name: 'loadfleet_time_to_first_token_seconds',
    help: 'Client-side time to first token (arrival of the first content delta minus send time) of successful requests, merged across agents, in seconds.',
  },
  tpot: {
    name: 'loadfleet_time_per_output_token_seconds',
    help: 'Client-side time per output token ((done - first output) / (completion tokens - 1)) of successful requests with at least 2 completion tokens, merged across agents, in seconds.',
  },
  e2e: {
    name: 'loadfleet_e2e_request_latency_seconds',
    help: 'Client-side end-to-end latency (arrival of [DONE] minus send time) of successful requests, merged across agents, in seconds.',
  },
};

/** The families /metrics serves for one snapshot. */
export function liveFamilies(s: LiveSnapshot): MetricFamily[] {
  const cls = (name: string): { class: string } => ({ class: name });
  const open = s.classes.filter((c) => !c.closedLoop);
  const closed = s.classes.filter((c) => c.closedLoop);
  const withHealth = (pick: (a: LiveSnapshot['agents'][number]) => number | null) =>
    s.agents.flatMap((a) => {
      const v = pick(a);
      return v === null ? [] : [{ labels: { agent: a.id }, value: v / 1000 }];
    });
  return [
    gauge('loadfleet_run_info', 'Always 1; its labels name the run and plan the other figures belong to.', [
      { labels: { run_id: s.runId, plan: s.planName }, value: 1 },
    ]),
    gauge('loadfleet_run_elapsed_seconds', "Seconds since the run's shared start instant (negative before it).", [
      { labels: {}, value: s.elapsedS },
    ]),
    gauge(
      'loadfleet_merged_seconds',
      'Seconds of 1 s interval data merged across every live agent so far; the per-class counters and histograms are as of the end of that span.',
      [{ labels: {}, value: s.mergedS }],
    ),
    counter(
      'loadfleet_requests_offered_total',
      'Open-loop arrivals the seeded global schedule placed before the end of the merged span, per class.',
      open.map((c) => ({ labels: cls(c.name), value: c.offered ?? 0 })),
    ),
    gauge(
      'loadfleet_target_concurrency',
      "The closed-loop class's target number of requests in flight now, from the plan.",
      closed.map((c) => ({ labels: cls(c.name), value: c.targetConcurrency ?? 0 })),
    ),
    counter(
      'loadfleet_requests_sent_total',
      'Requests the agents handed to their HTTP client in the merged span, per class.',
      s.classes.map((c) => ({ labels: cls(c.name), value: c.sent })),
    ),
    counter(
      'loadfleet_requests_completed_total',
      'Requests that finished with status ok (a 200 stream ending in [DONE] with usage) in the merged span, per class.',
      s.classes.map((c) => ({ labels: cls(c.name), value: c.completed })),
    ),
    counter(
      'loadfleet_requests_failed_total',
      'Requests that finished with any status other than ok (HTTP error, timeout, cut or malformed stream, connect error, aborted) in the merged span, per class.',
      s.classes.map((c) => ({ labels: cls(c.name), value: c.failed })),
    ),
    gauge(
      'loadfleet_requests_in_flight',
      'Requests sent but not yet finished as of the end of the merged span (sent - completed - failed), per class.',
      s.classes.map((c) => ({ labels: cls(c.name), value: c.inFlight })),
    ),
    counter(
      'loadfleet_requests_finished_total',
      'Finished requests by class, loadfleet status and HTTP status code ("none" when no response headers arrived), counted from request records as they reach the coordinator.',
      s.classes.flatMap((c) =>
        c.outcomes.map((o) => ({
          labels: { class: c.name, status: o.status, code: o.httpStatus === null ? 'none' : String(o.httpStatus) },
          value: o.count,
        })),
      ),
    ),
    counter(
      'loadfleet_requests_good_total',
      "Requests that succeeded and met every per-request bound of their class's SLO (TTFT, TPOT, e2e as declared), per class declaring an SLO; rate() of it is goodput in requests per second. Goodput counts requests good for their user; whether the class's p95 met its bound is a different question, answered by loadfleet_slo_ttft_breached.",
      s.classes.flatMap((c) => (c.good === null ? [] : [{ labels: cls(c.name), value: c.good }])),
    ),
    gauge(
      'loadfleet_slo_ttft_breached',
      `Whether the class's p95 TTFT over the last ${RECENT_S} merged seconds, each failed request ranked +∞ as the SLO verdict ranks it (more than 5% failed puts it past any bound), is above its SLO bound (1) or not (0); only for classes that declare a TTFT bound.`,
      s.classes.flatMap((c) => (c.sloTtftMs === null ? [] : [{ labels: cls(c.name), value: c.sloBreached ? 1 : 0 }])),
    ),
    ...LIVE_METRICS.map(
      (m): MetricFamily => ({
        name: HISTOGRAMS[m].name,
        help: HISTOGRAMS[m].help,
        type: 'histogram',
        series: s.classes.flatMap((c) => {
          const h = c.histograms.get(m);
          return h ? [histogramSeries(h, BUCKETS_S[m], cls(c.name))] : [];
        }),
      }),
    ),
    gauge(
      'loadfleet_agent_up',
      'Whether the agent is still part of the run: 1 while connected or after it finished, 0 once it was lost.',
      s.agents.map((a) => ({ labels: { agent: a.id }, value: a.state === 'lost' ? 0 : 1 })),
    ),
    gauge(
      'loadfleet_agent_schedule_lag_p99_seconds',
      "The agent's nearest-rank p99 of send time minus intended time over its open-loop requests so far, from its latest heartbeat, in seconds.",
      withHealth((a) => a.lagP99Ms),
    ),
    gauge(
      'loadfleet_agent_schedule_lag_max_seconds',
      "The agent's largest send time minus intended time so far, from its latest heartbeat, in seconds.",
      withHealth((a) => a.lagMaxMs),
    ),
    gauge(
      'loadfleet_agent_event_loop_delay_p99_seconds',
      "The agent's p99 of how late a 10 ms timer fired beyond its period since the run started, from its latest heartbeat, in seconds.",
      withHealth((a) => a.loopP99Ms),
    ),
    gauge(
      'loadfleet_agent_event_loop_delay_max_seconds',
      'The most a 10 ms timer of the agent fired late beyond its period since the run started, from its latest heartbeat, in seconds.',
      withHealth((a) => a.loopMaxMs),
    ),
  ];
}

function gauge(name: string, help: string, samples: { labels: Record<string, string>; value: number }[]): MetricFamily {
  return { name, help, type: 'gauge', samples };
}

function counter(name: string, help: string, samples: { labels: Record<string, string>; value: number }[]): MetricFamily {
  return { name, help, type: 'counter', samples };
}
