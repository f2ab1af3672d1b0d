// Pure: run.json's `server` block from what the scraper recorded — per source, how well the
// capture went; per window (`all` and each plan window), the derived figures; one sentence per figure.
import { nearestRank } from '../../shared/histogram.js';
import type { Plan } from '../../shared/plan.js';
import type { ClassFairness, Sample } from './derive.js';
import { deriveFigures, restartsBySource } from './derive.js';
import type { ScrapeRecord, SourceResult } from './types.js';

/** The request headers that carry a tenant (fairness) id, newest router names last. */
export const FAIRNESS_HEADERS = ['x-gateway-inference-fairness-id', 'x-llm-d-inference-fairness-id'];

/** Each class's fairness id from its own headers, else the target's; header names in any case. */
export function classFairness(plan: Plan): ClassFairness[] {
  return plan.classes.map((cls) => ({ name: cls.name, fairnessId: fairnessIn(cls.headers) ?? fairnessIn(plan.target?.headers) }));
}

// The gateway reads the Gateway API name before the llm-d one (as engine-sim does).
function fairnessIn(headers: Record<string, string> | undefined): string | null {
  const lower = new Map(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v.trim()]));
  return FAIRNESS_HEADERS.map((h) => lower.get(h)).find((v) => v !== undefined && v !== '') ?? null;
}

/** The good scrapes as derivation samples, in time order. */
export function toSamples(records: readonly ScrapeRecord[]): Sample[] {
  return records
    .filter((r) => r.series !== null)
    .map((r) => ({ source: r.source, elapsedS: r.elapsedS, series: r.series!, families: r.families }))
    .sort((a, b) => a.elapsedS - b.elapsedS);
}

/** Per-source capture health. */
export function sourceSummary(src: SourceResult): Record<string, unknown> {
  const ticks = src.records.filter((r) => r.kind === 'tick');
  const errors = src.records.filter((r) => r.error !== null);
  const byKind: Record<string, number> = {};
  for (const r of errors) byKind[r.error!.kind] = (byKind[r.error!.kind] ?? 0) + 1;
  const lags = Float64Array.from(ticks.map((r) => r.lagMs ?? 0)).sort();
  const durations = Float64Array.from(ticks.map((r) => r.durationMs)).sort();
  const snapshot = (kind: 'pre' | 'post') => {
    const r = src.records.find((x) => x.kind === kind);
    return r === undefined ? 'missing' : r.error === null ? 'ok' : `${r.error.kind}: ${r.error.message}`;
  };
  return {
    name: src.name,
    url: src.url,
    interval_s: src.intervalS,
    ticks_due: ticks.length + src.skippedTicks,
    scrapes: ticks.length,
    samples_ok: ticks.filter((r) => r.error === null).length,
    errors: errors.length,
    error_counts: byKind,
    first_errors: errors.slice(0, 5).map((r) => ({ scrape: r.kind, tick: r.tick, elapsed_s: round3(r.elapsedS), ...r.error! })),
    skipped_ticks: src.skippedTicks,
    pre_snapshot: snapshot('pre'),
    post_snapshot: snapshot('post'),
    lag_p99_ms: lags.length > 0 ? round3(nearestRank(lags, 0.99)) : null,
    lag_max_ms: lags.length > 0 ? round3(lags[lags.length - 1]!) : null,
    duration_p99_ms: durations.length > 0 ? round3(nearestRank(durations, 0.99)) : null,
    duration_max_ms: durations.length > 0 ? round3(durations[durations.length - 1]!) : null,
    restarts: restartsBySource(toSamples(src.records)).get(src.name) ?? null,
  };
}

/** run.json's `server` block. */
export function serverBlock(
  plan: Plan,
  sources: readonly SourceResult[],
): { sources: Record<string, unknown>[]; windows: Record<string, unknown>; definitions: Record<string, string> } {
  const classes = classFairness(plan);
  const all = toSamples(sources.flatMap((s) => s.records));
  const ticks = toSamples(sources.flatMap((s) => s.records.filter((r) => r.kind === 'tick')));
  const windows: Record<string, unknown> = { all: deriveFigures(all, classes) };
  for (const w of plan.windows ?? [])
    windows[w.name] = deriveFigures(
      ticks.filter((s) => s.elapsedS >= w.start_s && s.elapsedS <= w.end_s),
      classes,
    );
  return { sources: sources.map(sourceSummary), windows, definitions: serverDefinitions(classes) };
}

/** One sentence per figure of the server block. */
export function serverDefinitions(classes: readonly ClassFairness[]): Record<string, string> {
  const defs: Record<string, string> = {
    window_samples:
      'window all uses every good scrape from the pre snapshot to the post snapshot; a plan window uses the interval scrapes whose start (seconds from the run start) lies inside [start_s, end_s]',
    max_vllm_running: 'max over samples of the sum across series (and sources) of vllm:num_requests_running',
    max_vllm_waiting: 'max over samples of the sum across series (and sources) of vllm:num_requests_waiting',
    max_vllm_kv_cache_usage_pct: 'max over samples of the summed vllm:kv_cache_usage_perc (older name vllm:gpu_cache_usage_perc) × 100',
    vllm_preemptions_delta: 'max(0, last − first) of vllm:num_preemptions_total (older vllm:num_preemptions), per source, summed',
    vllm_prefix_cache_queries_delta:
      'max(0, last − first) of vllm:prefix_cache_queries_total (prompt tokens looked up in the prefix cache)',
    vllm_prefix_cache_hits_delta: 'max(0, last − first) of vllm:prefix_cache_hits_total (prompt tokens found in the prefix cache)',
    vllm_prefix_cache_hit_rate:
      "vllm_prefix_cache_hits_delta / vllm_prefix_cache_queries_delta: the share of prompt tokens looked up that the server's prefix cache held (null when none were looked up)",
    vllm_spec_decode_drafts_delta:
      'max(0, last − first) of vllm:spec_decode_num_drafts_total, per source, summed: speculative-decoding drafts proposed',
    vllm_spec_decode_draft_tokens_delta: 'max(0, last − first) of vllm:spec_decode_num_draft_tokens_total: draft tokens proposed',
    vllm_spec_decode_accepted_tokens_delta:
      'max(0, last − first) of vllm:spec_decode_num_accepted_tokens_total: draft tokens the target model accepted',
    vllm_spec_decode_acceptance_rate:
      'vllm_spec_decode_accepted_tokens_delta / vllm_spec_decode_draft_tokens_delta (null without speculative decoding)',
    vllm_spec_decode_mean_acceptance_length:
      "1 + vllm_spec_decode_accepted_tokens_delta / vllm_spec_decode_drafts_delta: tokens a decode step yields per draft, vLLM's mean acceptance length (null without speculative decoding)",
    max_epp_queue:
      'max over samples of the sum over fairness ids and priorities of llm_d_epp_flow_control_queue_size (older inference_extension_flow_control_queue_size)',
    max_pool_saturation:
      'max over samples of llm_d_epp_flow_control_pool_saturation (older inference_extension_…); 1 means the pool is full',
    epp_queue_count_delta: 'Δ of the flow-control queue-duration histogram count over every series: requests that left flow control',
    epp_queue_seconds_delta: 'Δ of the same histogram sum: seconds those requests spent in flow control',
    flow_control_materially_engaged: 'epp_queue_count_delta > 0 AND epp_queue_seconds_delta > 0 AND max_pool_saturation ≥ 1.0',
    gateway_restarts:
      'over the sources that expose flow-control families, the number of distinct process_start_time_seconds values minus one, summed',
    'sources[].ticks_due': 'interval ticks due (k-th at the run start + k·interval_s) between the run start and the end of the drain',
    'sources[].scrapes':
      'interval scrapes made (a tick due while the previous scrape of the source was still running is skipped, never caught up)',
    'sources[].samples_ok': 'interval scrapes that returned HTTP 200 with an exposition that parsed completely',
    'sources[].errors':
      'scrapes (interval and pre/post snapshots) that were unreachable, timed out, returned a non-200 status or a garbled exposition, or whose bearer_token_file could not be read',
    'sources[].skipped_ticks':
      'ticks not scraped because the previous scrape was still running or the coordinator was late past the next tick',
    'sources[].lag_p99_ms': 'nearest-rank p99 of (scrape start − tick due time) over interval scrapes; lag_max_ms its maximum',
    'sources[].duration_p99_ms':
      'nearest-rank p99 of the scrape duration (request to parsed body, or to the error); duration_max_ms its maximum',
    'sources[].restarts': 'distinct process_start_time_seconds values the source reported minus one (null when it reports none)',
  };
  for (const c of classes)
    defs[`${c.name}_epp_queue_mean_ms`] =
      c.fairnessId === null
        ? `null: class ${c.name} sends no fairness id header`
        : `Δsum / Δcount × 1000 of the flow-control queue-duration histogram series with fairness_id="${c.fairnessId}" (every outcome and priority)`;
  return defs;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
