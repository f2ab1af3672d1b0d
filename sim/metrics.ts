// Server-side signals in the Prometheus text format, named as vLLM names them so a scraper written
// for vLLM reads the simulator unchanged.

/** vLLM's time-to-first-token buckets, in seconds. */
export const TTFT_BUCKETS_S = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
/** vLLM's end-to-end latency buckets, in seconds. */
export const E2E_BUCKETS_S = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
/** Step lateness buckets, in seconds: sub-millisecond timer jitter up to a blocked event loop. */
export const OVERRUN_BUCKETS_S = [0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1];

/** Why a request finished normally, as vLLM labels it. */
export type FinishReason = 'stop' | 'length';
/** Why a request ended before finishing. */
export type AbortReason = 'client_disconnect' | 'fault' | 'shutdown';

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

/** Queue depths read at scrape time. */
export interface EngineGauges {
  running: number;
  waiting: number;
}

/** Every counter and histogram the simulator exposes. */
export class SimMetrics {
  /** Prompt tokens prefilled. */
  promptTokens = 0;
  /** Output tokens generated. */
  generationTokens = 0;
  /** Requests finished normally, by reason. */
  readonly success: Record<FinishReason, number> = { stop: 0, length: 0 };
  /** Requests ended early, by reason. */
  readonly aborted: Record<AbortReason, number> = { client_disconnect: 0, fault: 0, shutdown: 0 };
  /** Faults injected, by kind. */
  readonly faults = new Map<string, number>();
  /** Arrival to first token. */
  readonly ttft = new Histogram(TTFT_BUCKETS_S);
  /** Arrival to last token. */
  readonly e2e = new Histogram(E2E_BUCKETS_S);
  /** How late each engine step ran after its due time. */
  readonly stepOverrun = new Histogram(OVERRUN_BUCKETS_S);

  constructor(
    private readonly model: string,
    private readonly startTimeS: number,
  ) {}

  /** Counts one injected fault. */
  countFault(kind: string): void {
    this.faults.set(kind, (this.faults.get(kind) ?? 0) + 1);
  }

  /** The whole exposition text. */
  render(gauges: EngineGauges): string {
    const m = `model_name="${escapeLabel(this.model)}"`;
    const blocks = [
      family('vllm:num_requests_running', 'gauge', 'Requests generating tokens.', [`vllm:num_requests_running{${m}} ${gauges.running}`]),
      family('vllm:num_requests_waiting', 'gauge', 'Requests waiting for a slot.', [`vllm:num_requests_waiting{${m}} ${gauges.waiting}`]),
      family('vllm:prompt_tokens_total', 'counter', 'Prompt tokens prefilled.', [`vllm:prompt_tokens_total{${m}} ${this.promptTokens}`]),
      family('vllm:generation_tokens_total', 'counter', 'Tokens generated.', [
        `vllm:generation_tokens_total{${m}} ${this.generationTokens}`,
      ]),
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
        'loadfleet_sim_requests_aborted_total',
        'counter',
        'Requests ended before finishing.',
        labelled('loadfleet_sim_requests_aborted_total', m, 'reason', this.aborted),
      ),
      family(
        'loadfleet_sim_faults_injected_total',
        'counter',
        'Faults injected.',
        labelled('loadfleet_sim_faults_injected_total', m, 'fault', Object.fromEntries(this.faults)),
      ),
      family(
        'loadfleet_sim_step_overrun_seconds',
        'histogram',
        'How late engine steps ran.',
        this.stepOverrun.lines('loadfleet_sim_step_overrun_seconds', m),
      ),
      family('process_start_time_seconds', 'gauge', 'Start time of this simulated server, Unix seconds.', [
        `process_start_time_seconds ${this.startTimeS}`,
      ]),
    ];
    return `${blocks.join('\n')}\n`;
  }
}

function family(name: string, type: string, help: string, samples: string[]): string {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples].join('\n');
}

function labelled(name: string, base: string, label: string, values: Record<string, number>): string[] {
  return Object.entries(values).map(([key, value]) => `${name}{${base},${label}="${escapeLabel(key)}"} ${value}`);
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
