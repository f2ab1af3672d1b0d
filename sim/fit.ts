// The offline fit: replays a plan's traffic through the real pool (gateway + vLLM replicas) on a
// virtual clock, with no HTTP and no sleeping, and reports what the coordinator would: per class
// and window p95 TTFT / TPOT / e2e, and the peaks of the server-side signals. A 240 s scenario
// takes well under a second, which is what makes fitting the profile by iteration practical.
import { VirtualClock } from './clock.js';
import { flowHeaders } from './gateway-http.js';
import type { EngineJob, SimEngine } from './job.js';
import { resolveSimOptions, type SimOptions } from './options.js';
import { buildPool, type SimPool } from './pool.js';
import { arrivalsOf, type Scenario } from './scenario.js';

/** Latency figures of one class in one window, in milliseconds (nearest-rank p95). */
export interface WindowStats {
  requests: number;
  ttftP95Ms: number;
  tpotP95Ms: number;
  e2eP95Ms: number;
  /** Slowest request, end to end (compare with the plan's client timeout). */
  e2eMaxMs: number;
  /** Mean wait in the gateway queue (the coordinator's `<class>_epp_queue_mean_ms`). */
  queueMeanMs: number;
}

/** Peaks of the signals a scrape every 0.5 s would have seen. */
export interface Peaks {
  running: number;
  waiting: number;
  kvUsagePct: number;
  poolSaturation: number;
  gatewayQueue: number;
  preemptions: number;
}

/** One arm's outcome. */
export interface ArmResult {
  /** class → window → stats (`all` is the whole run). */
  stats: Record<string, Record<string, WindowStats>>;
  rejected: number;
  completed: number;
  peaks: Peaks;
}

interface Outcome {
  cls: string;
  intendedS: number;
  dispatchedS: number;
  firstS: number;
  doneS: number;
  tokens: number;
}

// Time after the plan's end allowed for draining, and the scrape interval.
const DRAIN_S = 600;
const SAMPLE_S = 0.5;

/** Runs the named classes of `scenario` through a pool built from `options` (gateway on by default). */
export function runArm(scenario: Scenario, classNames: readonly string[], options: SimOptions = {}): ArmResult {
  const clock = new VirtualClock();
  const resolved = resolveSimOptions({ gateway: true, ...options });
  const pool = buildPool(resolved, clock, 0);
  const outcomes: Outcome[] = [];
  let rejected = 0;
  for (const cls of scenario.classes.filter((c) => classNames.includes(c.name))) {
    const headers = Object.fromEntries(Object.entries(cls.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    const { objective, fairnessId } = flowHeaders(headers);
    const priority = pool.priorityOf(objective);
    for (const t of arrivalsOf(scenario, cls)) {
      clock.at(t, () => {
        const o: Outcome = { cls: cls.name, intendedS: t, dispatchedS: t, firstS: Number.NaN, doneS: Number.NaN, tokens: 0 };
        outcomes.push(o);
        let finish = (): void => {};
        const job: EngineJob = {
          promptTokens: cls.prompt.input_tokens,
          outputTokens: cls.prompt.output_tokens,
          finishReason: 'length',
          priority,
          onToken: (index) => {
            if (index === 0) o.firstS = clock.nowS();
            o.tokens += 1;
          },
          onFinish: () => {
            o.doneS = clock.nowS();
            finish();
          },
        };
        const gateway = pool.gateway;
        if (!gateway) {
          pool.pick().submit(job);
          return;
        }
        // A prompt of short words is about 5 bytes a token on the wire.
        const ticket = gateway.submit({
          fairnessId,
          priority,
          bytes: cls.prompt.input_tokens * 5,
          dispatch: () => {
            o.dispatchedS = clock.nowS();
            pool.pick().submit(job);
          },
          reject: () => {
            rejected += 1;
          },
        });
        finish = () => gateway.done(ticket);
      });
    }
  }
  const peaks = samplePeaks(clock, pool, scenario.duration_s + DRAIN_S);
  clock.run();
  return { stats: statsOf(scenario, outcomes), rejected, completed: outcomes.filter((o) => o.doneS >= 0).length, peaks };
}

function samplePeaks(clock: VirtualClock, pool: SimPool, untilS: number): Peaks {
  const peaks: Peaks = { running: 0, waiting: 0, kvUsagePct: 0, poolSaturation: 0, gatewayQueue: 0, preemptions: 0 };
  const sum = (f: (e: SimEngine) => number) => pool.engines.reduce((s, e) => s + f(e), 0);
  const sample = (): void => {
    peaks.running = Math.max(
      peaks.running,
      sum((e) => e.runningCount),
    );
    peaks.waiting = Math.max(
      peaks.waiting,
      sum((e) => e.waitingCount),
    );
    peaks.kvUsagePct = Math.max(peaks.kvUsagePct, ...pool.engines.map((e) => e.kvUsage * 100));
    peaks.poolSaturation = Math.max(peaks.poolSaturation, pool.gateway?.saturation ?? 0);
    peaks.gatewayQueue = Math.max(peaks.gatewayQueue, pool.gateway?.queuedCount ?? 0);
    if (clock.nowS() + SAMPLE_S <= untilS && (clock.nowS() < untilS - DRAIN_S || sum((e) => e.runningCount + e.waitingCount) > 0))
      clock.at(clock.nowS() + SAMPLE_S, sample);
  };
  clock.at(0, sample);
  // Preemptions are a counter: read once at the end, from the replicas' metrics as a scraper would.
  clock.at(untilS, () => {
    peaks.preemptions = pool
      .replicaFamilies()
      .filter((f) => f.name === 'vllm:num_preemptions_total')
      .flatMap((f) => f.samples)
      .reduce((s, line) => s + Number(line.split(' ').at(-1)), 0);
  });
  return peaks;
}

function statsOf(scenario: Scenario, outcomes: readonly Outcome[]): Record<string, Record<string, WindowStats>> {
  const out: Record<string, Record<string, WindowStats>> = {};
  const windows = [{ name: 'all', start_s: 0, end_s: Number.POSITIVE_INFINITY }, ...scenario.windows];
  for (const cls of new Set(outcomes.map((o) => o.cls))) {
    out[cls] = {};
    for (const w of windows) {
      const done = outcomes.filter((o) => o.cls === cls && o.intendedS >= w.start_s && o.intendedS < w.end_s && o.doneS >= 0);
      out[cls][w.name] = {
        requests: done.length,
        ttftP95Ms: p95(done.map((o) => o.firstS - o.intendedS)) * 1000,
        tpotP95Ms: p95(done.map((o) => (o.doneS - o.firstS) / Math.max(1, o.tokens - 1))) * 1000,
        e2eP95Ms: p95(done.map((o) => o.doneS - o.intendedS)) * 1000,
        e2eMaxMs: done.reduce((max, o) => Math.max(max, o.doneS - o.intendedS), 0) * 1000,
        queueMeanMs: (done.reduce((sum, o) => sum + o.dispatchedS - o.intendedS, 0) / done.length) * 1000,
      };
    }
  }
  return out;
}

/** Nearest-rank 95th percentile (index ceil(0.95·n) − 1); NaN for no data. */
export function p95(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(0.95 * sorted.length) - 1))]!;
}
