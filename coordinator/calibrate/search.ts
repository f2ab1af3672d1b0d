// Pure: finds filler sizes whose whole request counts `inputTokens` tokens on the target's
// tokenizer. Filler words are mostly one token each, so a correction of d tokens is about d words;
// a few counts settle it (the chat template, the head and the odd long word are what moves). Where
// a long word makes the count jump past the target, the filler stops below it and is topped up with
// pad words (" the", one token on the vocabularies we know) to land on the target exactly.
import { uncalibratedWords } from '../../shared/prompt-text.js';

/** Counts the whole request built with `prefixWords` words before the head, `words` after it and `padWords` pad words. */
export type CountRequest = (prefixWords: number, words: number, padWords: number) => Promise<number>;

/** The sizes found and what they counted. */
export interface SearchResult {
  prefixWords: number;
  words: number;
  padWords: number;
  counted: number;
  attempts: number;
}

/** Counts the search may make per class; each is one tokenize call. */
export const MAX_COUNTS = 10;
/** The most pad words the top-up adds (beyond, a filler word is the better step). */
const MAX_PAD = 64;

type Sizes = Omit<SearchResult, 'attempts'>;

/** Searches filler sizes for a class of `inputTokens` (with `sharedPrefixTokens` of them shared). */
export async function searchWords(inputTokens: number, sharedPrefixTokens: number, count: CountRequest): Promise<SearchResult> {
  const start = uncalibratedWords(inputTokens, sharedPrefixTokens);
  let attempts = 0;
  let best: Sizes | undefined;
  /** The largest count not above the target, for the top-up. */
  let below: Sizes | undefined;
  const off = (s: Sizes): number => Math.abs(s.counted - inputTokens);
  const measure = async (prefixWords: number, words: number, padWords = 0): Promise<Sizes> => {
    const s = { prefixWords, words, padWords, counted: await count(prefixWords, words, padWords) };
    attempts++;
    if (!best || off(s) < off(best)) best = s;
    if (s.counted <= inputTokens && (!below || s.counted > below.counted)) below = s;
    return s;
  };
  let last = await measure(start.prefixWords, start.words);
  // Tokens per filler word: one until two counts far enough apart measure it (the template and the
  // head are a constant, so only the difference between two counts says it).
  let perWord = 1;
  if (last.counted !== inputTokens) {
    const first = last;
    last = await measure(first.prefixWords, Math.max(0, first.words + inputTokens - first.counted));
    if (Math.abs(last.words - first.words) >= 8) perWord = Math.max(0.25, (last.counted - first.counted) / (last.words - first.words));
  }
  if (start.prefixWords > 0 && Math.abs(perWord - 1) > 0.05) {
    // A shared prefix is sized by that ratio once; its exact count shows in the server's cache metrics.
    const prefixWords = Math.max(1, Math.min(inputTokens - 1, Math.round(sharedPrefixTokens / perWord)));
    best = below = undefined;
    last = await measure(prefixWords, last.words);
  }
  const tried = new Set([last.words]);
  while (last.counted !== inputTokens && attempts < MAX_COUNTS - 1) {
    const step = Math.round((inputTokens - last.counted) / perWord) || Math.sign(inputTokens - last.counted);
    const next = Math.max(0, last.words + step);
    // Stuck at zero filler, or back to a size already counted (a long word in the way).
    if (tried.has(next)) break;
    tried.add(next);
    last = await measure(last.prefixWords, next);
  }
  const short = below ? inputTokens - below.counted : 0;
  if (best!.counted !== inputTokens && below && short > 0 && short <= MAX_PAD && attempts < MAX_COUNTS) {
    await measure(below.prefixWords, below.words, short);
  }
  return { ...best!, attempts };
}
