// Server-side signals in the Prometheus text format, named as vLLM names them so a scraper written
// for vLLM reads the simulator unchanged. Each engine (replica) has one SimMetrics; the server
// merges the replicas' families under one HELP/TYPE header per name.

/** vLLM's time-to-first-token buckets, in seconds. */
export const TTFT_BUCKETS_S = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
/** vLLM's end-to-end latency buckets, in seconds. */
export const E2E_BUCKETS_S = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
/** vLLM's inter-token latency buckets, in seconds. */
export const ITL_BUCKETS_S = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
/** Step lateness buckets, in seconds: sub-millisecond timer jitter up to a blocked event loop. */
export const OVERRUN_BUCKETS_S = [0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1];

/** Why a request finished normally, as vLLM labels it. */
export type FinishReason = 'stop' | 'length';
/** Why a request ended before finishing. */
export type AbortReason = 'client_disconnect' | 'fault' | 'shutdown';

/** One metric family: a name, its type and help, and its sample lines. */
export interface MetricFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram';
  help: string;
  samples: string[];
}

/** A cumulative histogram with fixed upper bounds. */
export class Histogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = bounds.map(() => 0);
  }

  /** Records one observation. */
  observe(value: number): void {
    this.sum += value;
    this.count += 1;
    const i = this.bounds.findIndex((b) => value <= b);
    if (i >= 0) this.counts[i]! += 1;
  }

  /** Exposition lines for this histogram under `name` with the given label text. */
  lines(name: string, labels: string): string[] {
    let cumulative = 0;
    const out = this.bounds.map((b, i) => {
      cumulative += this.counts[i]!;
      return `${name}_bucket{${labels},le="${b}"} ${cumulative}`;
    });
    out.push(
      `${name}_bucket{${labels},le="+Inf"} ${this.count}`,
      `${name}_sum{${labels}} ${this.sum}`,
      `${name}_count{${labels}} ${this.count}`,
    );
    return out;
  }
}

/** Engine state read at scrape time. */
export interface EngineGauges {
  running: number;
  waiting: number;
  /** KV cache in use, 0–1 (0 for the simple engine, which has none). */
  kvUsage?: number;
}

/** Every counter and histogram one engine exposes. */
export class SimMetrics {
  /** Prompt tokens prefilled. */
  promptTokens = 0;
  /** Output tokens generated. */
  generationTokens = 0;
  /** Running requests sent back to waiting because the KV cache ran out. */
  preemptions = 0;
  /** Prompt tokens looked up in the prefix cache (only while prefix caching is on). */
  prefixQueries = 0;
  /** Prompt tokens found in the prefix cache. */
  prefixHits = 0;
  /** Requests finished normally, by reason. */
  readonly success: Record<FinishReason, number> = { stop: 0, length: 0 };
  /** Requests ended early, by reason. */
  readonly aborted: Record<AbortReason, number> = { client_disconnect: 0, fault: 0, shutdown: 0 };
  /** Arrival to first token. */
  readonly ttft = new Histogram(TTFT_BUCKETS_S);
  /** Arrival to last token. */
  readonly e2e = new Histogram(E2E_BUCKETS_S);
  /** Gaps between a request's consecutive tokens. */
  readonly itl = new Histogram(ITL_BUCKETS_S);
  /** How late each engine step ran after its due time. */
  readonly stepOverrun = new Histogram(OVERRUN_BUCKETS_S);
  /** Label text of every sample (`model_name`, plus `engine` for a replica of several). */
  readonly labels: string;

  constructor(
    model: string,
    private readonly startTimeS: number,
    extraLabels: Record<string, string> = {},
  ) {
    this.labels = labelText({ model_name: model, ...extraLabels });
  }

  /** This engine's families (the server adds faults and process start time once). */
  families(gauges: EngineGauges): MetricFamily[] {
    const m = this.labels;
    const kv = gauges.kvUsage ?? 0;
    const one = (name: string, value: number) => [`${name}{${m}} ${value}`];
    return [
      family('vllm:num_requests_running', 'gauge', 'Requests in the running batch.', one('vllm:num_requests_running', gauges.running)),
      family('vllm:num_requests_waiting', 'gauge', 'Requests waiting to be scheduled.', one('vllm:num_requests_waiting', gauges.waiting)),
      family('vllm:kv_cache_usage_perc', 'gauge', 'KV cache usage, 0-1.', one('vllm:kv_cache_usage_perc', kv)),
      family('vllm:gpu_cache_usage_perc', 'gauge', 'KV cache usage, 0-1 (old name).', one('vllm:gpu_cache_usage_perc', kv)),
      family('vllm:num_preemptions_total', 'counter', 'Preemptions.', one('vllm:num_preemptions_total', this.preemptions)),
      family('vllm:prompt_tokens_total', 'counter', 'Prompt tokens prefilled.', one('vllm:prompt_tokens_total', this.promptTokens)),
      family('vllm:generation_tokens_total', 'counter', 'Tokens generated.', one('vllm:generation_tokens_total', this.generationTokens)),
      family(
        'vllm:prefix_cache_queries_total',
        'counter',
        'Prompt tokens queried in the prefix cache.',
        one('vllm:prefix_cache_queries_total', this.prefixQueries),
      ),
      family(
        'vllm:prefix_cache_hits_total',
        'counter',
        'Prompt tokens found in the prefix cache.',
        one('vllm:prefix_cache_hits_total', this.prefixHits),
      ),
      family(
        'vllm:request_success_total',
        'counter',
        'Requests that finished generating.',
        labelled('vllm:request_success_total', m, 'finished_reason', this.success),
      ),
      family(
        'vllm:time_to_first_token_seconds',
        'histogram',
        'Arrival to first token.',
        this.ttft.lines('vllm:time_to_first_token_seconds', m),
      ),
      family(
        'vllm:e2e_request_latency_seconds',
        'histogram',
        'Arrival to last token.',
        this.e2e.lines('vllm:e2e_request_latency_seconds', m),
      ),
      family(
        'vllm:inter_token_latency_seconds',
        'histogram',
        'Gaps between consecutive tokens.',
        this.itl.lines('vllm:inter_token_latency_seconds', m),
      ),
      family(
        'loadfleet_sim_requests_aborted_total',
        'counter',
        'Requests ended before finishing.',
        labelled('loadfleet_sim_requests_aborted_total', m, 'reason', this.aborted),
      ),
      family(
        'loadfleet_sim_step_overrun_seconds',
        'histogram',
        'How late engine steps ran.',
        this.stepOverrun.lines('loadfleet_sim_step_overrun_seconds', m),
      ),
    ];
  }

  /** The exposition text of this engine alone, with the process start time. */
  render(gauges: EngineGauges): string {
    return renderFamilies([...this.families(gauges), processStartFamily(this.startTimeS)]);
  }
}

/** A family from its parts. */
export function family(name: string, type: MetricFamily['type'], help: string, samples: string[]): MetricFamily {
  return { name, type, help, samples };
}

/** One sample per key of `values`, labelled `label="key"` after the `base` labels. */
export function labelled(name: string, base: string, label: string, values: Record<string, number>): string[] {
  return Object.entries(values).map(([key, value]) => `${name}{${base},${label}="${escapeLabel(key)}"} ${value}`);
}

/** `process_start_time_seconds`, which scrapers use to detect restarts. */
export function processStartFamily(startTimeS: number): MetricFamily {
  return family('process_start_time_seconds', 'gauge', 'Start time of this simulated server, Unix seconds.', [
    `process_start_time_seconds ${startTimeS}`,
  ]);
}

/** Exposition text; families sharing a name (one per replica) get one HELP/TYPE header. */
export function renderFamilies(families: readonly MetricFamily[]): string {
  const merged = new Map<string, MetricFamily>();
  for (const f of families) {
    const seen = merged.get(f.name);
    if (seen) seen.samples.push(...f.samples);
    else merged.set(f.name, { ...f, samples: [...f.samples] });
  }
  const blocks = [...merged.values()].map((f) => [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`, ...f.samples].join('\n'));
  return `${blocks.join('\n')}\n`;
}

/** `a="x",b="y"` for a label map, values escaped. */
export function labelText(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
    .join(',');
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
