// Pure: the data-quality gate (domain.md §5), one small function per named check.
import { PROMPT_TOLERANCE } from '../class-shape.js';
import { CLOCK_RESIDUAL_DEFINITION, clockResidual } from './clock-residual.js';
import type { Check, Gate, ValidityInput } from './types.js';
import { decide, gate, notApplicable, notEvaluated } from './types.js';

/** Limits of the schedule-kept check (domain.md §5). */
export const SCHEDULE_LIMITS = { start_spread_ms: 50, schedule_lag_p99_ms: 100, schedule_lag_max_ms: 500 } as const;

/** One sentence per check. */
export const DATA_QUALITY_DEFINITIONS: Record<string, string> = {
  schedule_kept: `every planned open-loop request was dispatched; per class, the spread over agents of their first request's lateness (sent − intended, or sent − phase start in a closed loop) is ≤ ${SCHEDULE_LIMITS.start_spread_ms} ms; per open-loop class the exact schedule lag p99 ≤ ${SCHEDULE_LIMITS.schedule_lag_p99_ms} ms and max ≤ ${SCHEDULE_LIMITS.schedule_lag_max_ms} ms; and the offered schedule hash equals the plan's (with sampled records, plan.records.sample_every, the hash is not recomputed — offered_schedule_matches null, offered_schedule_not_evaluable says why — the dispatched counts come from the agents' own tallies and the schedule lag p99 and max from the merged schedule_lag histogram)`,
  metric_capture_healthy:
    'every scrape source answered its pre and post snapshots and every interval tick (no scrape errors, no skipped ticks, samples_ok = ticks_due > 0), and no source restarted (process_start_time_seconds never changed); not_applicable when nothing is scraped (the plan has a target and declares no scrape list)',
  headers_honoured:
    "for each class that sends a fairness id header and dispatched requests, the gateway's flow-control series carry that fairness_id with the class's declared priority (or any priority when the class declares none); not_applicable when no class that sent requests carries a fairness id header; not evaluated when one does and no scrape source exposes gateway metrics",
  cache_evidence_matches_declaration:
    'every class declares unique prompts (cache "unique"), so the prefix cache must find nothing: vllm_prefix_cache_hits_delta = 0 over the run; vllm_prefix_cache_queries_delta shows whether the server looked (prefix caching on) at all; with replayed traces (cache "trace") or sessions (cache "sessions", each turn re-sending the previous turn\'s prompt) the hits must instead be within 5% of the queried tokens of implied_prefix_hit_tokens (what the rows\' hash ids imply for a cache that never evicts) when prefix caching is on, and 0 when it is off; not_applicable when a class shares a prefix (hits then depend on server settings the plan does not declare: no claim to prove), or when no scraped source exposes prefix-cache counters and no trace or sessions class claims implied hits (unique prompts are loadfleet\'s own construction, proven only where the server counts its cache hits); not evaluated when a trace or sessions class claims implied hits, sources are scraped, and none exposes the counters',
  stream_integrity:
    'no HTTP 200 ended without a clean stream ([DONE], and usage where target.require_usage is true), and every successful request of an ignore_eos class whose server reported usage returned exactly its output_tokens as completion_tokens (a tokenizer re-count or a chunk count cannot prove an output length)',
  request_shape:
    "every successful request's prompt tokens are as planned: for a class sized on the target's tokenizer (prompt_length_method server-tokenize or tokenizer-file) the server's usage.prompt_tokens equals the request's planned_prompt_tokens exactly (a session's later turns hold the server's re-tokenized replies, which no client can plan: they are reported as later_turns_outside_tolerance, ±10%, not judged), without usage the count made before the run (the calibrated count, or the sampled bodies of prompt_length_check) stands in; for a class sized in words, within ±10% of input_tokens; not evaluated when a prompt was neither reported nor counted",
  output_token_counts:
    'states per class how many successful requests took completion_tokens from usage, from a tokenizer over the streamed text, or from chunk counts, and the share estimated from chunks; it passes when every successful request has a count, since chunk estimates never enter tpot, ntpot or decode_tok_s (they enter throughput_tok_s only); not evaluated without a successful request',
  clock_residual: CLOCK_RESIDUAL_DEFINITION,
  request_canaries:
    'present only when a class declares prompt.canary: every checked response of such a class began with its own marker and carried no other request marker, and at least one was checked (a failed canary is cross-talk: a cache or routing bug, or a server that ignores instructions)',
};

/** All planned requests dispatched, start spread, schedule lag, offered schedule hash. */
export function scheduleKept(input: ValidityInput): Check {
  const problems: string[] = [];
  const classes: Record<string, unknown> = {};
  for (const c of input.classes) {
    classes[c.name] = {
      planned: c.planned,
      dispatched: c.openLoop ? c.dispatched : null,
      start_spread_ms: round3(c.startSpreadMs),
      schedule_lag_p99_ms: c.scheduleLagP99Ms,
      schedule_lag_max_ms: c.scheduleLagMaxMs,
    };
    if (c.planned !== null && c.dispatched < c.planned)
      problems.push(`${c.name}: ${c.dispatched} of ${c.planned} planned requests dispatched`);
    if (c.startSpreadMs !== null && c.startSpreadMs > SCHEDULE_LIMITS.start_spread_ms)
      problems.push(`${c.name}: start spread ${round3(c.startSpreadMs)} ms > ${SCHEDULE_LIMITS.start_spread_ms} ms`);
    if (c.scheduleLagP99Ms !== null && c.scheduleLagP99Ms > SCHEDULE_LIMITS.schedule_lag_p99_ms)
      problems.push(`${c.name}: schedule lag p99 ${c.scheduleLagP99Ms} ms > ${SCHEDULE_LIMITS.schedule_lag_p99_ms} ms`);
    if (c.scheduleLagMaxMs !== null && c.scheduleLagMaxMs > SCHEDULE_LIMITS.schedule_lag_max_ms)
      problems.push(`${c.name}: schedule lag max ${c.scheduleLagMaxMs} ms > ${SCHEDULE_LIMITS.schedule_lag_max_ms} ms`);
  }
  // Sampled records: the hash needs every request's intended time; the rest of the check stands.
  const unjudged = input.offeredScheduleNotEvaluable;
  const matches = unjudged === undefined ? input.offeredScheduleSha256 === input.scheduleSha256 : null;
  if (matches === false) problems.push('the offered schedule hash differs from the plan schedule hash');
  return decide('schedule_kept', problems, {
    classes,
    limits: SCHEDULE_LIMITS,
    schedule_sha256: input.scheduleSha256,
    offered_schedule_sha256: input.offeredScheduleSha256,
    offered_schedule_matches: matches,
    ...(unjudged !== undefined && { offered_schedule_not_evaluable: unjudged }),
  });
}

/** No scrape errors or skipped ticks, every source sampled every tick, no restart. */
export function metricCaptureHealthy(input: ValidityInput): Check {
  if (input.sources.length === 0)
    return notApplicable('metric_capture_healthy', 'nothing was scraped: the plan has a target and declares no scrape list');
  const problems: string[] = [];
  for (const s of input.sources) {
    if (s.errors > 0)
      problems.push(
        `${s.name}: ${s.errors} scrape error(s) (${Object.entries(s.error_counts)
          .map(([k, n]) => `${n} ${k}`)
          .join(', ')})`,
      );
    if (s.skipped_ticks > 0) problems.push(`${s.name}: ${s.skipped_ticks} skipped tick(s)`);
    if (s.ticks_due === 0) problems.push(`${s.name}: no interval tick was due`);
    else if (s.samples_ok < s.ticks_due) problems.push(`${s.name}: ${s.samples_ok} of ${s.ticks_due} ticks sampled`);
    if (s.pre_snapshot !== 'ok') problems.push(`${s.name}: pre snapshot ${s.pre_snapshot}`);
    if (s.post_snapshot !== 'ok') problems.push(`${s.name}: post snapshot ${s.post_snapshot}`);
    if ((s.restarts ?? 0) > 0) problems.push(`${s.name}: restarted ${s.restarts} time(s)`);
  }
  return decide('metric_capture_healthy', problems, {
    sources: input.sources.map((s) => ({
      name: s.name,
      ticks_due: s.ticks_due,
      samples_ok: s.samples_ok,
      errors: s.errors,
      error_counts: s.error_counts,
      first_errors: s.first_errors,
      skipped_ticks: s.skipped_ticks,
      pre_snapshot: s.pre_snapshot,
      post_snapshot: s.post_snapshot,
      restarts: s.restarts,
    })),
    gateway_restarts: input.server.gateway_restarts ?? null,
  });
}

/** Each class's priority is visible in the gateway's labels for its fairness id. */
export function headersHonoured(input: ValidityInput): Check {
  const name = 'headers_honoured';
  const seen = input.fairnessPriorities;
  const evaluated = input.classes.filter((c) => c.fairnessId !== null && c.dispatched + c.ok > 0);
  const evidence: Record<string, unknown> = {
    seen_on_gateway: seen,
    classes: Object.fromEntries(
      input.classes.map((c) => [
        c.name,
        {
          fairness_id: c.fairnessId,
          declared_priority: c.priority,
          priorities_seen: c.fairnessId === null ? null : (seen[c.fairnessId] ?? []),
        },
      ]),
    ),
  };
  // Which classes call for the check comes first: without a fairness header there is nothing to honour.
  if (evaluated.length === 0) return notApplicable(name, 'no class that sent requests carries a fairness id header', evidence);
  if (input.server.max_pool_saturation === null && Object.keys(seen).length === 0)
    return notEvaluated(
      name,
      `class(es) ${evaluated.map((c) => c.name).join(', ')} send a fairness id header, and no scrape source exposes gateway flow-control metrics`,
      evidence,
    );
  const problems: string[] = [];
  for (const c of evaluated) {
    const priorities = seen[c.fairnessId!];
    if (priorities === undefined) problems.push(`${c.name}: fairness id ${c.fairnessId} never appears in the gateway's labels`);
    else if (c.priority !== null && !priorities.some((p) => Number(p) === c.priority))
      problems.push(
        `${c.name}: fairness id ${c.fairnessId} appears with priority ${priorities.join(', ')}, not the declared ${c.priority}`,
      );
  }
  return decide(name, problems, evidence);
}

/** Unique prompts declared ⇒ the prefix cache found nothing. */
export function cacheEvidence(input: ValidityInput): Check {
  const name = 'cache_evidence_matches_declaration';
  const queries = input.server.vllm_prefix_cache_queries_delta ?? null;
  const hits = input.server.vllm_prefix_cache_hits_delta ?? null;
  const evidence = {
    declared: Object.fromEntries(input.classes.map((c) => [c.name, c.cache])),
    vllm_prefix_cache_queries_delta: queries,
    vllm_prefix_cache_hits_delta: hits,
    prefix_caching_inferred: typeof queries === 'number' ? (queries > 0 ? 'on' : 'off') : null,
  };
  const shared = input.classes.filter((c) => c.cache === 'shared').map((c) => c.name);
  if (shared.length > 0)
    return notApplicable(
      name,
      `class(es) ${shared.join(', ')} share a prefix; their hits depend on server settings the plan does not declare, so there is no cache claim to prove`,
      evidence,
    );
  const traces = input.classes.filter((c) => typeof c.impliedPrefixHitTokens === 'number');
  if (typeof hits !== 'number') {
    // An implied-hits claim is what trace and sessions classes are run for: with sources scraped, its missing counters keep the gate open.
    if (traces.length > 0 && input.sources.length > 0)
      return notEvaluated(
        name,
        `class(es) ${traces.map((c) => c.name).join(', ')} imply prefix-cache hits, and no scraped source exposes vllm:prefix_cache_hits_total`,
        evidence,
      );
    return notApplicable(
      name,
      input.sources.length === 0
        ? 'nothing was scraped: the plan declares no server-side evidence to prove its cache declaration with'
        : 'every class declares unique prompts (loadfleet builds them so) and no scraped source exposes vllm:prefix_cache_hits_total to prove it with',
      evidence,
    );
  }
  if (traces.length > 0) return traceCacheEvidence(name, hits, typeof queries === 'number' ? queries : 0, traces, evidence);
  return decide(name, hits === 0 ? [] : [`${hits} prompt tokens hit the prefix cache although every prompt was declared unique`], evidence);
}

/** Measured hits may fall short of the implied ones by this share of the queried tokens (concurrent prefills, eviction). */
const TRACE_HIT_TOLERANCE = 0.05;

// Replayed traces share exactly what their hash ids say; the other classes' unique prompts add none.
function traceCacheEvidence(name: string, hits: number, queries: number, traces: ValidityInput['classes'], evidence: object): Check {
  const implied = traces.reduce((s, c) => s + (c.impliedPrefixHitTokens ?? 0), 0);
  const full = { ...evidence, implied_prefix_hit_tokens: implied, tolerance_share_of_queries: TRACE_HIT_TOLERANCE };
  // A server without prefix caching queries nothing: then nothing may hit.
  if (queries === 0) return decide(name, hits === 0 ? [] : [`${hits} prefix-cache hits with no queries`], full);
  const off = Math.abs(hits - implied);
  const problems =
    off <= TRACE_HIT_TOLERANCE * queries
      ? []
      : [
          `${hits} prompt tokens hit the prefix cache; the replayed trace or sessions imply ${implied} (off by ${off}, more than 5% of ${queries} queried)`,
        ];
  return decide(name, problems, full);
}

/** Every 200 is a clean stream with exactly the requested output (ignore_eos). */
export function streamIntegrity(input: ValidityInput): Check {
  const problems: string[] = [];
  const classes: Record<string, unknown> = {};
  let http200 = 0;
  for (const c of input.classes) {
    http200 += c.httpCounts['200'] ?? 0;
    classes[c.name] = {
      http_200: c.httpCounts['200'] ?? 0,
      http_200_not_clean: c.http200NotOk,
      ignore_eos: c.ignoreEos,
      output_tokens: c.outputTokens,
      completion_tokens_mismatch: c.ignoreEos ? c.completionMismatch : null,
      completion_tokens_from_usage: c.outputSources.usage,
      usage_required: c.requireUsage,
    };
    if (c.http200NotOk > 0) problems.push(`${c.name}: ${c.http200NotOk} HTTP 200 response(s) without a clean stream`);
    if (c.ignoreEos && c.completionMismatch > 0)
      problems.push(`${c.name}: ${c.completionMismatch} successful request(s) without exactly ${c.outputTokens} completion tokens`);
  }
  if (http200 === 0) return notEvaluated('stream_integrity', 'no request got HTTP 200', { classes });
  return decide('stream_integrity', problems, { classes });
}

/**
 * Prompt tokens as planned. A class sized on the target's tokenizer is held to its plan exactly:
 * every request with usage must count its planned tokens (a session's later turns, which hold
 * replies the server re-tokenizes, are reported only). A class sized in words is held within ±10% of its
 * input_tokens (per input for embeddings), as is a request without usage against the count made at calibration.
 */
export function requestShape(input: ValidityInput): Check {
  const problems: string[] = [];
  const unverifiable: string[] = [];
  const classes: Record<string, unknown> = {};
  for (const c of input.classes) {
    const counted = c.calibratedPromptTokens;
    const exact = c.promptLengthMethod !== 'words-unverified';
    // A class whose requests differ has no one target to hold a calibrated count against.
    const target = typeof c.inputTokens === 'number' ? c.inputTokens : null;
    const countedInside = counted !== null && target !== null && Math.abs(counted - target) <= PROMPT_TOLERANCE * target;
    classes[c.name] = {
      input_tokens: c.inputTokens,
      successful: c.ok,
      prompt_length_method: c.promptLengthMethod,
      compared: exact ? 'exactly' : 'within ±10%',
      calibrated_prompt_tokens: counted,
      prompt_length_check: c.promptLengthCheck ?? null,
      prompt_tokens_min: c.promptTokensMin,
      prompt_tokens_max: c.promptTokensMax,
      planned_exactly: c.promptExactPlanned ?? null,
      differ_from_planned: c.promptDifferExact ?? null,
      max_abs_difference: c.promptMaxDifference ?? null,
      outside_tolerance: c.promptOutside,
      later_turns_outside_tolerance: c.promptOutsideInexact ?? null,
      prompt_tokens_unreported: c.promptUnreported,
    };
    // A session's later turn holds the server's reply as it re-tokenizes the text: no client can
    // plan that count, so those turns are reported, not judged (their new message was counted
    // before load, prompt_length_check).
    if (exact) {
      if ((c.promptDifferExact ?? 0) > 0)
        problems.push(
          `${c.name}: ${c.promptDifferExact} of ${c.promptExactPlanned} request(s) differ from their planned prompt tokens (by up to ${c.promptMaxDifference})`,
        );
    } else if (c.promptOutside > 0)
      problems.push(`${c.name}: ${c.promptOutside} request(s) with prompt tokens outside ±10% of ${c.inputTokens}`);
    if (c.promptUnreported === 0) continue;
    if (counted === null && !exact)
      unverifiable.push(`${c.name}: ${c.promptUnreported} request(s) without usage and a prompt length never counted (words-unverified)`);
    else if (counted === null) {
      const check = c.promptLengthCheck;
      if (check && check.exact < check.sampled)
        problems.push(
          `${c.name}: ${c.promptUnreported} request(s) without usage; ${check.sampled - check.exact} of ${check.sampled} sampled bodies differed from their plan on the target`,
        );
    } else if (!countedInside)
      problems.push(
        `${c.name}: the target's tokenizer counted ${counted} prompt tokens for ${c.promptUnreported} request(s) without usage, outside ±10% of ${c.inputTokens}`,
      );
  }
  if (input.classes.every((c) => c.ok === 0))
    return notEvaluated('request_shape', 'no successful request reported its prompt tokens', { classes });
  if (problems.length === 0 && unverifiable.length > 0)
    return notEvaluated('request_shape', unverifiable.join('; '), { classes, tolerance: PROMPT_TOLERANCE });
  return decide('request_shape', problems, { classes, tolerance: PROMPT_TOLERANCE });
}

/** Where completion counts came from, and how many are estimates. */
export function outputTokenCounts(input: ValidityInput): Check {
  const classes: Record<string, unknown> = {};
  let ok = 0;
  let estimated = 0;
  const problems: string[] = [];
  for (const c of input.classes) {
    if (c.generates === false) continue; // embeddings: no output to count (metric_population.not_applicable)
    const counted = c.outputSources.usage + c.outputSources.tokenizer + c.outputSources.chunks;
    ok += c.ok;
    estimated += c.outputSources.chunks;
    classes[c.name] = { successful: c.ok, ...c.outputSources, estimated_share: c.ok > 0 ? round6(c.outputSources.chunks / c.ok) : null };
    if (counted < c.ok) problems.push(`${c.name}: ${c.ok - counted} successful request(s) without an output count`);
  }
  if (ok === 0) return notEvaluated('output_token_counts', 'no request succeeded', { classes });
  return decide('output_token_counts', problems, { classes, estimated_share: round6(estimated / ok) });
}

/** Every checked canary passed; only in the gate when a class declares canaries. */
export function requestCanaries(input: ValidityInput): Check {
  const declared = input.classes.filter((c) => c.canary);
  const classes = Object.fromEntries(
    declared.map((c) => [c.name, { request_canary_samples: c.canarySamples, request_canary_passed: c.canaryPassed }]),
  );
  if (declared.every((c) => c.canarySamples === 0))
    return notEvaluated('request_canaries', 'no response of a canary class was checked', { classes });
  const problems = declared
    .filter((c) => c.canaryPassed < c.canarySamples)
    .map((c) => `${c.name}: ${c.canarySamples - c.canaryPassed} of ${c.canarySamples} canaries failed`);
  return decide('request_canaries', problems, { classes });
}

/** The data-quality gate. */
export function dataQuality(input: ValidityInput): Gate {
  return gate(
    [
      scheduleKept(input),
      metricCaptureHealthy(input),
      headersHonoured(input),
      cacheEvidence(input),
      streamIntegrity(input),
      requestShape(input),
      outputTokenCounts(input),
      ...(input.classes.some((c) => c.canary) ? [requestCanaries(input)] : []),
      ...(input.clockResiduals ? [clockResidual(input)] : []),
    ],
    definitionsFor(input),
    appliesBecause(input),
  );
}

/** Why each check applies to this run (read only for the checks that did). */
export function appliesBecause(input: ValidityInput): Record<string, string> {
  const names = (cs: ValidityInput['classes']) => cs.map((c) => c.name).join(', ');
  const headers = input.classes.filter((c) => c.fairnessId !== null);
  const implied = input.classes.filter((c) => typeof c.impliedPrefixHitTokens === 'number');
  return {
    schedule_kept: 'every run offers a schedule',
    metric_capture_healthy: `${input.sources.length} scrape source(s): ${input.sources.map((s) => s.name).join(', ')}`,
    headers_honoured: `class(es) ${names(headers)} send a fairness id header`,
    cache_evidence_matches_declaration:
      implied.length > 0
        ? `class(es) ${names(implied)} imply prefix-cache hits`
        : 'every class declares unique prompts and a scraped source exposes vllm:prefix_cache_hits_total',
    stream_integrity: 'every run streams its responses',
    request_shape: 'every class sizes its prompts',
    output_token_counts: 'every run counts output tokens',
    request_canaries: `class(es) ${names(input.classes.filter((c) => c.canary))} declare prompt.canary`,
  };
}

// Definitions of the checks this gate holds (request_canaries only when it is there).
function definitionsFor(input: ValidityInput): Record<string, string> {
  const { request_canaries, clock_residual, ...rest } = DATA_QUALITY_DEFINITIONS;
  return {
    ...rest,
    ...(input.classes.some((c) => c.canary) ? { request_canaries: request_canaries! } : {}),
    ...(input.clockResiduals ? { clock_residual: clock_residual! } : {}),
  };
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

function round3(x: number | null): number | null {
  return x === null ? null : Math.round(x * 1000) / 1000;
}
