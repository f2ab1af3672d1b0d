// Pure: the `server` figures of one window from the scrapes inside it (domain.md §4). Gauges are
// "max over samples of the sum across series"; when several sources expose a signal, each
// source's latest value is carried forward and the sum taken at every sample time. Counters are
// max(0, last − first) per source, summed. Old and new names are both read (names.ts).

import { getOrCreate } from '../../shared/maps.js';
import {
  EPP_POOL_SATURATION,
  EPP_QUEUE_DURATION,
  EPP_QUEUE_SIZE,
  PROCESS_START,
  VLLM_KV_USAGE,
  VLLM_PREEMPTIONS,
  VLLM_PREFIX_HITS,
  VLLM_PREFIX_QUERIES,
  VLLM_RUNNING,
  VLLM_SPEC_ACCEPTED,
  VLLM_SPEC_DRAFT_TOKENS,
  VLLM_SPEC_DRAFTS,
  VLLM_WAITING,
} from './names.js';
import type { PromSample } from './prom-parse.js';

/** A good scrape as the derivations see it. */
export interface Sample {
  source: string;
  elapsedS: number;
  series: readonly PromSample[];
  families: ReadonlySet<string>;
}

/** A plan class and the fairness id its headers send (null when it sends none). */
export interface ClassFairness {
  name: string;
  fairnessId: string | null;
}

/** The figures of one window; null where the scrapes do not show the signal. */
export type ServerFigures = Record<string, number | boolean | null>;

type Filter = (labels: Record<string, string>) => boolean;
const ANY: Filter = () => true;

/**
 * Sum of the series of the first alias the sample exposes; 0 when that family is declared
 * without series (e.g. a histogram before its first observation); null when none is present.
 */
export function valueIn(sample: Sample, aliases: readonly string[], suffix = '', filter: Filter = ANY): number | null {
  for (const base of aliases) {
    const name = base + suffix;
    const matching = sample.series.filter((s) => s.name === name);
    if (matching.length === 0 && !sample.families.has(base) && !sample.families.has(name)) continue;
    // NaN (a gauge the server could not compute) carries no information; it is left out of the sum.
    return matching.filter((s) => filter(s.labels) && !Number.isNaN(s.value)).reduce((sum, s) => sum + s.value, 0);
  }
  return null;
}

/** Largest single series value of the first alias present (saturation is per pool, never summed). */
export function maxSeriesIn(sample: Sample, aliases: readonly string[]): number | null {
  for (const name of aliases) {
    const values = sample.series.filter((s) => s.name === name && !Number.isNaN(s.value)).map((s) => s.value);
    if (values.length > 0) return Math.max(...values);
  }
  return null;
}

/** Max over sample times of the sum over sources (each source's latest value carried forward). */
export function maxOfSums(samples: readonly Sample[], read: (s: Sample) => number | null): number | null {
  const latest = new Map<string, number>();
  let max: number | null = null;
  for (const s of samples) {
    const v = read(s);
    if (v === null) continue;
    latest.set(s.source, v);
    let total = 0;
    for (const x of latest.values()) total += x;
    max = max === null ? total : Math.max(max, total);
  }
  return max;
}

/** Σ over sources of (last − first) of a counter; `clampAtZero` applies max(0, ·) per source. */
export function counterDelta(samples: readonly Sample[], read: (s: Sample) => number | null, clampAtZero = true): number | null {
  const firstLast = new Map<string, [number, number]>();
  for (const s of samples) {
    const v = read(s);
    if (v === null) continue;
    const fl = firstLast.get(s.source);
    if (fl) fl[1] = v;
    else firstLast.set(s.source, [v, v]);
  }
  if (firstLast.size === 0) return null;
  let total = 0;
  for (const [first, last] of firstLast.values()) total += clampAtZero ? Math.max(0, last - first) : last - first;
  return total;
}

/** Distinct process start times per source, minus one: how often each restarted inside `samples`. */
export function restartsBySource(samples: readonly Sample[]): Map<string, number> {
  const starts = new Map<string, Set<number>>();
  for (const s of samples) {
    const v = maxSeriesIn(s, PROCESS_START);
    if (v === null) continue;
    getOrCreate(starts, s.source, () => new Set<number>()).add(v);
  }
  return new Map([...starts].map(([source, set]) => [source, set.size - 1]));
}

/** Sources that expose gateway flow-control families anywhere in `samples`. */
export function gatewaySources(samples: readonly Sample[]): Set<string> {
  const out = new Set<string>();
  for (const s of samples) {
    if (valueIn(s, EPP_POOL_SATURATION) !== null || valueIn(s, EPP_QUEUE_SIZE) !== null) out.add(s.source);
  }
  return out;
}

/** The window's figures from its samples (in time order, every source). */
export function deriveFigures(samples: readonly Sample[], classes: readonly ClassFairness[]): ServerFigures {
  const kv = maxOfSums(samples, (s) => valueIn(s, VLLM_KV_USAGE));
  const saturation = samples.reduce<number | null>((m, s) => {
    const v = maxSeriesIn(s, EPP_POOL_SATURATION);
    return v === null ? m : Math.max(m ?? v, v);
  }, null);
  const queueCount = counterDelta(samples, (s) => valueIn(s, EPP_QUEUE_DURATION, '_count'));
  const queueSeconds = counterDelta(samples, (s) => valueIn(s, EPP_QUEUE_DURATION, '_sum'));
  const out: ServerFigures = {
    max_vllm_running: maxOfSums(samples, (s) => valueIn(s, VLLM_RUNNING)),
    max_vllm_waiting: maxOfSums(samples, (s) => valueIn(s, VLLM_WAITING)),
    max_vllm_kv_cache_usage_pct: kv === null ? null : round3(kv * 100),
    vllm_preemptions_delta: counterDelta(samples, (s) => valueIn(s, VLLM_PREEMPTIONS)),
    vllm_prefix_cache_queries_delta: counterDelta(samples, (s) => valueIn(s, VLLM_PREFIX_QUERIES)),
    vllm_prefix_cache_hits_delta: counterDelta(samples, (s) => valueIn(s, VLLM_PREFIX_HITS)),
    vllm_spec_decode_drafts_delta: counterDelta(samples, (s) => valueIn(s, VLLM_SPEC_DRAFTS)),
    vllm_spec_decode_draft_tokens_delta: counterDelta(samples, (s) => valueIn(s, VLLM_SPEC_DRAFT_TOKENS)),
    vllm_spec_decode_accepted_tokens_delta: counterDelta(samples, (s) => valueIn(s, VLLM_SPEC_ACCEPTED)),
    max_epp_queue: maxOfSums(samples, (s) => valueIn(s, EPP_QUEUE_SIZE)),
    max_pool_saturation: saturation,
    epp_queue_count_delta: queueCount,
    epp_queue_seconds_delta: queueSeconds === null ? null : round6(queueSeconds),
  };
  Object.assign(out, cacheAndSpecRates(out));
  for (const cls of classes) out[`${cls.name}_epp_queue_mean_ms`] = classQueueMeanMs(samples, cls.fairnessId);
  out.flow_control_materially_engaged =
    queueCount === null || queueSeconds === null || saturation === null ? null : queueCount > 0 && queueSeconds > 0 && saturation >= 1;
  const gateways = gatewaySources(samples);
  const restarts = restartsBySource(samples);
  out.gateway_restarts = gateways.size === 0 ? null : [...gateways].reduce((n, g) => n + (restarts.get(g) ?? 0), 0);
  return out;
}

/**
 * The server's own cache and speculative-decoding rates from the window's counter deltas (both the
 * held-records path and the streaming summary call this): prefix-cache hits per token looked up,
 * accepted draft tokens per draft token, and vLLM's mean acceptance length (1 + accepted per draft).
 */
export function cacheAndSpecRates(f: ServerFigures): ServerFigures {
  const ratio = (num: unknown, den: unknown): number | null =>
    typeof num === 'number' && typeof den === 'number' && den > 0 ? Math.round((num / den) * 1e6) / 1e6 : null;
  const drafts = f.vllm_spec_decode_drafts_delta;
  const accepted = f.vllm_spec_decode_accepted_tokens_delta;
  return {
    vllm_prefix_cache_hit_rate: ratio(f.vllm_prefix_cache_hits_delta, f.vllm_prefix_cache_queries_delta),
    vllm_spec_decode_acceptance_rate: ratio(accepted, f.vllm_spec_decode_draft_tokens_delta),
    vllm_spec_decode_mean_acceptance_length:
      typeof accepted === 'number' && typeof drafts === 'number' && drafts > 0 ? Math.round((1 + accepted / drafts) * 1e6) / 1e6 : null,
  };
}

/** Δsum / Δcount × 1000 of the queue-duration histogram for one fairness id (every outcome and priority). */
export function classQueueMeanMs(samples: readonly Sample[], fairnessId: string | null): number | null {
  if (fairnessId === null) return null;
  const mine: Filter = (l) => l.fairness_id === fairnessId;
  const count = counterDelta(samples, (s) => valueIn(s, EPP_QUEUE_DURATION, '_count', mine));
  const sum = counterDelta(samples, (s) => valueIn(s, EPP_QUEUE_DURATION, '_sum', mine));
  return count === null || sum === null || count === 0 ? null : round3((sum / count) * 1000);
}

/** fairness_id → priorities seen on the gateway's flow-control series (headers honoured). */
export function fairnessPriorities(samples: readonly Sample[]): Map<string, Set<string>> {
  const names = new Set([...EPP_QUEUE_SIZE, ...EPP_QUEUE_DURATION.flatMap((n) => [`${n}_count`, `${n}_sum`, `${n}_bucket`])]);
  const out = new Map<string, Set<string>>();
  for (const s of samples) {
    for (const x of s.series) {
      if (!names.has(x.name) || x.labels.fairness_id === undefined) continue;
      const set = getOrCreate(out, x.labels.fairness_id, () => new Set<string>());
      if (x.labels.priority !== undefined) set.add(x.labels.priority);
    }
  }
  return out;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
