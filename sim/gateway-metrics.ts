// The gateway's Prometheus families, named and labelled as llm-d's endpoint picker (EPP) names
// them. A (fairness id, priority) series appears with the first request that carries it and then
// stays (at 0 when idle), so a scraper can check that every class's headers reached the gateway.
import { family, Histogram, labelText, type MetricFamily } from './metrics.js';

/** The EPP's queue-duration buckets, in seconds. */
export const QUEUE_DURATION_BUCKETS_S = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** How a request left flow control, as the EPP labels it. */
export type QueueOutcome = 'Dispatched' | 'RejectedCapacity' | 'EvictedTTL' | 'EvictedContextCancelled';

/** Pool state read at scrape time. */
export interface PoolGauges {
  saturation: number;
  /** Averages over in-process replicas; absent in front of a real upstream. */
  replicas?: { waiting: number; kvUsage: number; running: number };
}

interface Series {
  fairnessId: string;
  priority: number;
  size: number;
  bytes: number;
  durations: Map<QueueOutcome, Histogram>;
}

const P = 'llm_d_epp_';

/** Queue, outcome and saturation metrics of one gateway. */
export class GatewayMetrics {
  private readonly series = new Map<string, Series>();

  constructor(private readonly pool: string) {}

  /** Makes sure the series of (fairnessId, priority) exists. */
  seen(fairnessId: string, priority: number): void {
    this.get(fairnessId, priority);
  }

  /** Adds `count` requests of `bytes` to (or, negative, removes them from) a queue. */
  queueChange(fairnessId: string, priority: number, count: number, bytes: number): void {
    const s = this.get(fairnessId, priority);
    s.size += count;
    s.bytes += bytes;
  }

  /** Records how long a request spent in flow control and how it left. */
  outcome(fairnessId: string, priority: number, outcome: QueueOutcome, durationS: number): void {
    const s = this.get(fairnessId, priority);
    let h = s.durations.get(outcome);
    if (!h) {
      h = new Histogram(QUEUE_DURATION_BUCKETS_S);
      s.durations.set(outcome, h);
    }
    h.observe(durationS);
  }

  private get(fairnessId: string, priority: number): Series {
    const key = `${priority}\u0000${fairnessId}`;
    let s = this.series.get(key);
    if (!s) {
      s = { fairnessId, priority, size: 0, bytes: 0, durations: new Map() };
      this.series.set(key, s);
    }
    return s;
  }

  /** Every gateway family. */
  families(gauges: PoolGauges): MetricFamily[] {
    const all = [...this.series.values()];
    const labels = (s: Series) => labelText({ fairness_id: s.fairnessId, priority: String(s.priority), inference_pool: this.pool });
    const pool = labelText({ inference_pool: this.pool });
    const out = [
      family(
        `${P}flow_control_queue_size`,
        'gauge',
        'Requests queued in flow control.',
        all.map((s) => `${P}flow_control_queue_size{${labels(s)}} ${s.size}`),
      ),
      family(
        `${P}flow_control_queue_bytes`,
        'gauge',
        'Bytes of the requests queued in flow control.',
        all.map((s) => `${P}flow_control_queue_bytes{${labels(s)}} ${s.bytes}`),
      ),
      family(
        `${P}flow_control_request_queue_duration_seconds`,
        'histogram',
        'Time requests spent in flow control, by outcome.',
        all.flatMap((s) =>
          [...s.durations].flatMap(([outcome, h]) =>
            h.lines(`${P}flow_control_request_queue_duration_seconds`, `${labels(s)},outcome="${outcome}"`),
          ),
        ),
      ),
      family(`${P}flow_control_pool_saturation`, 'gauge', 'In-flight requests over max concurrency (1 = saturated).', [
        `${P}flow_control_pool_saturation{${pool}} ${gauges.saturation}`,
      ]),
    ];
    const r = gauges.replicas;
    if (r) {
      out.push(
        family(`${P}average_queue_size`, 'gauge', 'Mean waiting requests per replica.', [`${P}average_queue_size{${pool}} ${r.waiting}`]),
        family(`${P}average_kv_cache_utilization`, 'gauge', 'Mean KV cache usage per replica, 0-1.', [
          `${P}average_kv_cache_utilization{${pool}} ${r.kvUsage}`,
        ]),
        family(`${P}average_running_requests`, 'gauge', 'Mean running requests per replica.', [
          `${P}average_running_requests{${pool}} ${r.running}`,
        ]),
      );
    }
    return out;
  }
}
