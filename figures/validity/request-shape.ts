// Pure: the data-quality check request_shape — every successful request's prompt tokens as planned,
// proven by the server's usage or, without usage, by the count made before load; a class with
// neither is not_evaluated, never passed on nothing.
import { PROMPT_TOLERANCE } from '../class-shape.js';
import type { Check, ClassEvidence, ValidityInput } from './types.js';
import { decide, notEvaluated } from './types.js';

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
      prompt_length_check_error: c.promptLengthCheckError ?? null,
      prompt_exactness: c.promptExactness ?? null,
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
      unverifiable.push(`${c.name}: ${c.promptUnreported} request(s) without usage and a prompt length never counted (${neverCounted(c)})`);
    else if (counted === null) {
      // Without usage, only the sampled bodies counted before load stand in: no sample, no evidence.
      const check = c.promptLengthCheck;
      if (!check || check.sampled === 0)
        unverifiable.push(
          `${c.name}: ${c.promptUnreported} request(s) without usage, and ${
            c.promptLengthCheckError
              ? `the pre-load count of sampled bodies failed (${c.promptLengthCheckError})`
              : 'no body was counted before load'
          }`,
        );
      else if (check.exact < check.sampled)
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

// Why a class sized in words was never counted: the target offered no way, or counting failed.
function neverCounted(c: ClassEvidence): string {
  const failed = c.promptExactness?.not_exact.find((n) => n.reason === 'count_failed');
  return failed ? failed.why : 'words-unverified';
}
