// Pure: the data-quality check cache_evidence_matches_declaration — the prefix cache's own counters
// against what the plan declares (unique prompts find no hit; a replayed trace or sessions find what
// their hash ids or re-sent turns imply).
import type { Check, ValidityInput } from './types.js';
import { decide, notApplicable, notEvaluated } from './types.js';

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
    // Nothing scraped: the plan declares no server-side evidence, so there is nothing to prove with.
    if (input.sources.length === 0)
      return notApplicable(
        name,
        'nothing was scraped: the plan declares no server-side evidence to prove its cache declaration with',
        evidence,
      );
    // Sources were scraped, and none counts prefix-cache hits: the claim (unique prompts find no
    // hit, or the trace's implied hits) stands unproven — evidence missing, not a check that does not apply.
    const claim =
      traces.length > 0
        ? `class(es) ${traces.map((c) => c.name).join(', ')} imply prefix-cache hits`
        : 'every class declares unique prompts (the prefix cache must find nothing)';
    return notEvaluated(
      name,
      `${claim}, and no scraped source (${input.sources.map((s) => s.name).join(', ')}) exposes vllm:prefix_cache_hits_total to prove it with`,
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
