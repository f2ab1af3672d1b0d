// Pure: the data-quality gate (domain.md §5), one small function per named check (request_shape,
// cache_evidence_matches_declaration and clock_residual in their own files).

export { cacheEvidence } from './cache-evidence.js';
export { requestShape } from './request-shape.js';

import { cacheEvidence } from './cache-evidence.js';
import { CLOCK_RESIDUAL_DEFINITION, clockResidual } from './clock-residual.js';
import { requestShape } from './request-shape.js';
import type { Check, Gate, ValidityInput } from './types.js';
import { decide, gate, notApplicable, notEvaluated } from './types.js';

/** Limits of the schedule-kept check (domain.md §5). */
export const SCHEDULE_LIMITS = { start_spread_ms: 50, schedule_lag_p99_ms: 100, schedule_lag_max_ms: 500 } as const;

/** One sentence per check. */
export const DATA_QUALITY_DEFINITIONS: Record<string, string> = {
  schedule_kept: `every planned open-loop request was dispatched; per class, the spread over agents of their first request's lateness (sent − intended, or sent − phase start in a closed loop) is ≤ ${SCHEDULE_LIMITS.start_spread_ms} ms; per open-loop class the exact schedule lag p99 ≤ ${SCHEDULE_LIMITS.schedule_lag_p99_ms} ms and max ≤ ${SCHEDULE_LIMITS.schedule_lag_max_ms} ms; and the offered schedule hash equals the plan's (with sampled records, plan.records.sample_every, the hash is not recomputed — offered_schedule_matches null, offered_schedule_not_evaluable says why — the dispatched counts come from the agents' own tallies and the schedule lag p99 and max from the merged schedule_lag histogram); not evaluated when no class sent a request`,
  metric_capture_healthy:
    'every scrape source answered its pre and post snapshots and every interval tick (no scrape errors, no skipped ticks, samples_ok = ticks_due > 0), and no source restarted (process_start_time_seconds never changed); not_applicable when nothing is scraped (the plan has a target and declares no scrape list)',
  headers_honoured:
    "for each class that sends a fairness id header and dispatched requests, the gateway's flow-control series carry that fairness_id with the class's declared priority (or any priority when the class declares none); not_applicable when no class that sent requests carries a fairness id header; not evaluated when one does and no scrape source exposes gateway metrics",
  cache_evidence_matches_declaration:
    'every class declares unique prompts (cache "unique"), so the prefix cache must find nothing: vllm_prefix_cache_hits_delta = 0 over the run; vllm_prefix_cache_queries_delta shows whether the server looked (prefix caching on) at all; with replayed traces (cache "trace") or sessions (cache "sessions", each turn re-sending the previous turn\'s prompt) the hits must instead be within 5% of the queried tokens of implied_prefix_hit_tokens (what the rows\' hash ids imply for a cache that never evicts) when prefix caching is on, and 0 when it is off; not_applicable when a class shares a prefix (hits then depend on server settings the plan does not declare: no claim to prove) or nothing is scraped (the plan declares no server-side evidence); not evaluated when sources are scraped and none exposes the prefix-cache counters (the claim stands unproven)',
  stream_integrity:
    'no HTTP 200 ended without a clean stream ([DONE], and usage where target.require_usage is true), and every successful request of an ignore_eos class whose server reported usage returned exactly its output_tokens as completion_tokens (a tokenizer re-count or a chunk count cannot prove an output length: completion_tokens_unverified counts the successful requests of an ignore_eos class left unproven so)',
  request_shape:
    "every successful request's prompt tokens are as planned: for a class sized on the target's tokenizer (prompt_length_method server-tokenize or tokenizer-file) the server's usage.prompt_tokens equals the request's planned_prompt_tokens exactly (a session's later turns hold the server's re-tokenized replies, which no client can plan: they are reported as later_turns_outside_tolerance, ±10%, not judged), without usage the count made before the run (the calibrated count, or the sampled bodies of prompt_length_check) stands in; for a class sized in words, within ±10% of input_tokens; not evaluated when a prompt was neither reported nor counted: no usage and a class sized in words, or no usage and no body counted before load (prompt_length_check_error says why the count failed). Its evidence states per class the rows it could not send exact and why (prompt_exactness: the template floor, a failed count) beside the rows it did",
  output_token_counts:
    'states per class how many successful requests took completion_tokens from usage, from a tokenizer over the streamed text, or from chunk counts, and the share estimated from chunks; it passes when every successful request has a count, since chunk estimates never enter tpot, ntpot or decode_tok_s (they enter throughput_tok_s only); not evaluated without a successful request',
  clock_residual: CLOCK_RESIDUAL_DEFINITION,
  request_canaries:
    'present only when a class declares prompt.canary: every checked response of such a class began with its own marker and carried no other request marker, and at least one was checked in every such class (a failed canary is cross-talk: a cache or routing bug, or a server that ignores instructions)',
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
  const evidence = {
    classes,
    limits: SCHEDULE_LIMITS,
    schedule_sha256: input.scheduleSha256,
    offered_schedule_sha256: input.offeredScheduleSha256,
    offered_schedule_matches: matches,
    ...(unjudged !== undefined && { offered_schedule_not_evaluable: unjudged }),
  };
  // Nothing planned and nothing sent (a closed loop that never started): no schedule was shown kept.
  const sent = input.classes.reduce((n, c) => n + c.dispatched + Object.values(c.statusCounts).reduce((a, b) => a + b, 0), 0);
  if (problems.length === 0 && sent === 0)
    return notEvaluated('schedule_kept', 'no class sent a request: nothing shows the schedule was kept', evidence);
  return decide('schedule_kept', problems, evidence);
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
      // Only usage proves an output length: the rest of an ignore_eos class's successes are unproven.
      completion_tokens_unverified: c.ignoreEos ? c.ok - c.outputSources.usage : null,
      usage_required: c.requireUsage,
    };
    if (c.http200NotOk > 0) problems.push(`${c.name}: ${c.http200NotOk} HTTP 200 response(s) without a clean stream`);
    if (c.ignoreEos && c.completionMismatch > 0)
      problems.push(`${c.name}: ${c.completionMismatch} successful request(s) without exactly ${c.outputTokens} completion tokens`);
  }
  if (http200 === 0) return notEvaluated('stream_integrity', 'no request got HTTP 200', { classes });
  return decide('stream_integrity', problems, { classes });
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
  // A canary class none of whose responses was checked shows nothing, whatever the others showed.
  const unchecked = declared.filter((c) => c.canarySamples === 0).map((c) => c.name);
  if (problems.length === 0 && unchecked.length > 0)
    return notEvaluated('request_canaries', `no response of canary class(es) ${unchecked.join(', ')} was checked`, { classes });
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
        : 'every class declares unique prompts and the plan scrapes the server',
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
