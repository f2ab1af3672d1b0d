// The text of every prompt, defined once: the coordinator sizes it against the target's tokenizer
// before a run (calibrate.ts) and the agents build exactly the same text from the same seed, so
// what was counted is what is sent. A prompt is [shared prefix] head [filler]: seeded filler words
// around a short per-request head that defeats prefix caching.
import { createHash } from 'node:crypto';
import { rngFromKey } from './rng.js';

// Common short English words: real tokenizers map most of them, with their leading space, to one
// token each, so a word count moves a token count almost one for one while calibrating.
export const VOCABULARY = (
  'the of and to in is was for on are with as be at by this had not but from or have an they which one you were all ' +
  'we her she there been if more when will would who so no time can out up about into than them some could its two ' +
  'may first then do any like my now over such our man me even most made after also did many before must through ' +
  'years where much your way well down should because each just those people how too little state good very make'
).split(' ');

/** The filler text of one class: the shared prefix and the words after the head. */
export interface PromptFill {
  /** Text before the head ("" or words ending in a space). */
  prefix: string;
  /** Text after the head ("" or a space and words). */
  suffix: string;
}

/** The word calibration tops a prompt up with: one token, with its space, on the vocabularies we know. */
const PAD_WORD = ' the';

/**
 * Seeded filler for `seed` and `className`: `prefixWords` words before the head, `words` after it,
 * then `padWords` pad words (calibration's top-up to the exact length).
 */
export function promptFill(seed: number, className: string, prefixWords: number, words: number, padWords = 0): PromptFill {
  const rng = rngFromKey(`${seed}:${className}:prompt`);
  const draw = (count: number): string =>
    Array.from({ length: count }, () => VOCABULARY[Math.floor(rng.next() * VOCABULARY.length)]).join(' ');
  return {
    prefix: prefixWords > 0 ? `${draw(prefixWords)} ` : '',
    suffix: (words > 0 ? ` ${draw(words)}` : '') + PAD_WORD.repeat(padWords),
  };
}

/** A request's id (x-request-id, never in the prompt where it would cost tokens): the one format, for every load model. */
export function requestId(runId: string, className: string, requestIndex: number): string {
  return `lf-${runId}-${className}-${requestIndex}`;
}

/**
 * The class and request index a request id names (found anywhere in `text`: a server may wrap it,
 * e.g. `chatcmpl-lf-…-7`), or null when it names no request of this run.
 */
export function requestOfRequestId(
  runId: string,
  classNames: readonly string[],
  text: string,
): { classIndex: number; requestIndex: number } | null {
  const prefix = `lf-${runId}-`;
  const at = text.indexOf(prefix);
  if (at < 0) return null;
  const rest = text.slice(at + prefix.length);
  // The longest class name that fits: "rt" must not take the requests of "rt-2".
  let best: { classIndex: number; requestIndex: number } | null = null;
  let bestLength = -1;
  for (const [classIndex, name] of classNames.entries()) {
    if (!rest.startsWith(`${name}-`) || name.length <= bestLength) continue;
    const digits = /^\d+/.exec(rest.slice(name.length + 1))?.[0];
    if (!digits || !Number.isSafeInteger(Number(digits))) continue;
    best = { classIndex, requestIndex: Number(digits) };
    bestLength = name.length;
  }
  return best;
}

/** Digits of the request index in a head: fixed, so every head of a run has the same length. */
const HEAD_INDEX_DIGITS = 6;
const TAG_LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * The head of request `requestIndex`: four letters unique to the run and class, then the index in
 * fixed width, one word (e.g. `kqzv000042`). A few tokens on real tokenizers (the long request id
 * travels in the x-request-id header instead, where it costs no prompt tokens) and one word for
 * engine-sim's.
 */
export function promptHead(runId: string, className: string, requestIndex: number): string {
  return `${runTag(runId, className)}${String(requestIndex).padStart(HEAD_INDEX_DIGITS, '0')}`;
}

// Four letters from the run id and class: unique enough that another run's prompts never share a head.
// Kept per run and class: a sha256 per request was a few µs of every request's build.
function runTag(runId: string, className: string): string {
  const key = `${runId}:${className}`;
  let tag = runTags.get(key);
  if (tag === undefined) {
    const digest = createHash('sha256').update(key).digest();
    tag = Array.from({ length: 4 }, (_, i) => TAG_LETTERS[digest[i]! % TAG_LETTERS.length]).join('');
    if (runTags.size >= RUN_TAGS_KEPT) runTags.clear();
    runTags.set(key, tag);
  }
  return tag;
}
const runTags = new Map<string, string>();
/** A bound on the tags kept (an agent sees a few runs of a few classes; a coordinator's checks may see more). */
const RUN_TAGS_KEPT = 256;

/**
 * The canary marker of request `requestIndex` (domain.md §1: `<RUN>_REQ_<seed>_<i:05d>`), with
 * four capitals unique to the run and class standing for the run. With `prompt.canary` it is the
 * request's head, and the prompt ends by asking the model to begin its answer with it.
 */
export function canaryMarker(runId: string, className: string, seed: number, requestIndex: number): string {
  return `${runTag(runId, className).toUpperCase()}_REQ_${seed}_${String(requestIndex).padStart(5, '0')}`;
}

/** Any request's canary marker, ours or another's, inside a response. */
export const CANARY_PATTERN = /[A-Z]{4}_REQ_\d+_\d{5,}/g;

/** The whole prompt text of one request (what a tokenizer counts, chat template aside). */
export function promptText(fill: PromptFill, head: string, canary = false): string {
  return `${fill.prefix}${head}${fill.suffix}${canary ? canaryInstruction(head) : ''}`;
}

/** The closing instruction of a canary prompt: the model is to begin its answer with the marker. */
export function canaryInstruction(marker: string): string {
  return `\n\nBegin your answer with ${marker} and nothing before it.`;
}

/** Filler sizes before any calibration: one word per intended token, the head counted as one. */
export function uncalibratedWords(inputTokens: number, sharedPrefixTokens: number): { prefixWords: number; words: number } {
  const prefixWords = Math.min(sharedPrefixTokens, inputTokens - 1);
  return { prefixWords, words: Math.max(0, inputTokens - prefixWords - 1) };
}
