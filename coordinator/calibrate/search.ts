// Pure: finds filler word counts whose whole request counts `inputTokens` tokens on the target's
// tokenizer. Filler words are mostly one token each, so a correction of d tokens is about d words;
// a few counts settle it (the chat template, the head and the odd two-token word are what moves).
import { uncalibratedWords } from '../../shared/prompt-text.js';

/** Counts the whole request built with `prefixWords` words before the head and `words` after it. */
export type CountRequest = (prefixWords: number, words: number) => Promise<number>;

/** The sizes found and what they counted. */
export interface SearchResult {
  prefixWords: number;
  words: number;
  counted: number;
  attempts: number;
}

/** Counts the search may make per class; each is one tokenize call. */
export const MAX_COUNTS = 8;

/** Searches filler sizes for a class of `inputTokens` (with `sharedPrefixTokens` of them shared). */
export async function searchWords(inputTokens: number, sharedPrefixTokens: number, count: CountRequest): Promise<SearchResult> {
  let { prefixWords, words } = uncalibratedWords(inputTokens, sharedPrefixTokens);
  let counted = await count(prefixWords, words);
  let attempts = 1;
  let best: SearchResult = { prefixWords, words, counted, attempts };
  const tried = new Set([words]);
  const measure = async (): Promise<void> => {
    counted = await count(prefixWords, words);
    attempts++;
    if (Math.abs(counted - inputTokens) < Math.abs(best.counted - inputTokens)) best = { prefixWords, words, counted, attempts };
  };
  // Tokens per filler word: one until two counts far enough apart measure it (the template and the
  // head are a constant, so only the difference between two counts says it).
  let perWord = 1;
  if (counted !== inputTokens) {
    const before = { words, counted };
    words = Math.max(0, words + inputTokens - counted);
    tried.add(words);
    await measure();
    if (Math.abs(words - before.words) >= 8) perWord = Math.max(0.25, (counted - before.counted) / (words - before.words));
  }
  if (prefixWords > 0 && Math.abs(perWord - 1) > 0.05) {
    // A shared prefix is sized by that ratio once; its exact count shows in the server's cache metrics.
    prefixWords = Math.max(1, Math.min(inputTokens - 1, Math.round(sharedPrefixTokens / perWord)));
    best = { ...best, counted: Number.POSITIVE_INFINITY };
    tried.clear();
    tried.add(words);
    await measure();
  }
  while (counted !== inputTokens && attempts < MAX_COUNTS) {
    const step = Math.round((inputTokens - counted) / perWord) || Math.sign(inputTokens - counted);
    const next = Math.max(0, words + step);
    // Stuck at zero filler, or back to a size already counted (a two-token word in the way).
    if (tried.has(next)) break;
    tried.add(next);
    words = next;
    await measure();
  }
  return { ...best, attempts };
}
