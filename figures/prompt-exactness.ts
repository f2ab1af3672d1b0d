// Pure: per class sized on the target's tokenizer, which requests were built to count exactly the
// prompt tokens they asked for, and which could not be and why — beside the ones that were, so an
// exact-token class never reads as exact for rows it could not send exact.
import type { PromptCalibration } from '../shared/plan.js';
import type { RowExactness } from './class-shape.js';

/** Why rows of an exact-token class were not sent exact. */
export type NotExactReason = 'template_floor' | 'count_missed' | 'count_failed' | 'later_turns';

/** run.json `classes.<c>.prompt_exactness`. */
export interface PromptExactness {
  /** Requests of the class (its rows of requests.ndjson, every status). */
  rows: number;
  /** Of those, requests built to count exactly the prompt tokens they asked for on the target. */
  exact_rows: number;
  /** The rest, by reason, each with how many, the first request indices (up to 10) and why. */
  not_exact: { reason: NotExactReason; rows: number; first_request_indices: number[] | null; why: string }[];
}

/**
 * The exactness of one class's rows; null for a class never meant to be exact (sized in words
 * because the target offered no way to count, or by its own plan).
 */
export function promptExactness(cal: PromptCalibration | undefined, rows: RowExactness): PromptExactness | null {
  if (!cal) return null;
  if (cal.count_error !== undefined)
    return {
      rows: rows.rows,
      exact_rows: 0,
      not_exact: [
        {
          reason: 'count_failed',
          rows: rows.rows,
          first_request_indices: null,
          why: `counting on the target failed before load (${cal.count_error}), so every request was sized in words, one per intended token`,
        },
      ],
    };
  if (cal.method === 'words-unverified') return null;
  const notExact: PromptExactness['not_exact'] = [];
  // A class of identical requests with filler to spare that still counted off its asked length: the
  // filler search on the target ended off it (within its count budget), not at the template floor.
  const counted = cal.counted_prompt_tokens;
  const spare = counted !== null && cal.words + cal.pad_words + cal.prefix_words > 0;
  const missed = (spare ? rows.floor : 0) + rows.short;
  if (missed > 0)
    notExact.push({
      reason: 'count_missed',
      rows: missed,
      first_request_indices: null,
      why: `the filler search on the target ended at ${counted} prompt tokens, off the asked length, within its count budget`,
    });
  if (rows.floor > 0 && !spare)
    notExact.push({
      reason: 'template_floor',
      rows: rows.floor,
      first_request_indices: rows.floorFirst,
      why: 'asked for fewer prompt tokens than the template, opener and head alone count on the target, so built to that floor (requests.ndjson planned_prompt_tokens is the floor, above the asked length)',
    });
  if (rows.laterTurns > 0)
    notExact.push({
      reason: 'later_turns',
      rows: rows.laterTurns,
      first_request_indices: null,
      why: "a session's later turns hold earlier replies as the server re-tokenizes them, which no client can plan exactly (judged within ±10%)",
    });
  return { rows: rows.rows, exact_rows: rows.exact, not_exact: notExact };
}

/** One sentence per figure, for run.json's field_definitions. */
export const PROMPT_EXACTNESS_DEFINITIONS: Record<string, string> = {
  'classes.<class>.prompt_exactness':
    "for a class sized on the target's tokenizer (or meant to be, when the count failed): rows, the class's requests (every status); exact_rows, those built to count exactly the prompt tokens they asked for; not_exact, the rest by reason — template_floor (asked below what the template, opener and head alone count, so built to that floor; first_request_indices lists up to 10), count_missed (a class of identical requests whose filler search on the target ended off the asked length), count_failed (counting on the target failed before load, every request sized in words) and later_turns (a session's later turns, holding replies the server re-tokenizes) — each with why; null for a class sized in words because nothing could count",
  'classes.<class>.prompt_length_check_error':
    'why the pre-load count of sampled bodies (prompt_length_check) failed; null when it was made or nothing could count. Without it, a class whose server reports no usage has nothing to prove its prompt lengths, and request_shape is not_evaluated',
};
