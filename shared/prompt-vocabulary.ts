// The token-exact vocabulary of a target, and the text of every per-request prompt built from it.
// The coordinator finds, through the target's own tokenizer (calibrate/vocabulary.ts), words that
// each count exactly one token after a space in running text, and the fixed costs around them; it
// travels in the plan as run, so each agent builds text of a known token count from the seed alone.
// Every message's text is `opener w w w …`: the opener (a fixed word, its cost at the start of a
// message measured) and then vocabulary words, one token each. A unique head is opener + index
// words + tag words, so it costs a fixed, known number of tokens on every request.
import { createHash } from 'node:crypto';
import { VOCABULARY } from './prompt-text.js';
import type { Rng } from './rng.js';
import { rngFromKey } from './rng.js';

/** What was found on the target (plan.prompt_vocabulary, written by the coordinator). */
export interface PromptVocabulary {
  /** How it was counted; words-unverified: nothing was counted (one word assumed one token, engine-sim's rule). */
  method: 'server-tokenize' | 'tokenizer-file' | 'words-unverified';
  /** Words that each count exactly one token after a space in running text. */
  words: string[];
  /** The first word of every message's text. */
  opener: string;
  /** Tokens the opener adds at the start of a message. */
  opener_tokens: number;
  /** Tokens of a request whose only message is empty: the chat template (and BOS) around the text. */
  request_tokens: number;
  /** Tokens a conversation's template adds per further turn (an assistant and a user message) beyond their text. */
  turn_tokens: number;
  /** Vocabulary words in every head after its opener (index words, then tag words). */
  head_words: number;
  /** Index words in a head: heads are unique for this many requests per class (vocabulary size ** index words). */
  index_words: number;
  /** Candidate words tried and tokenize calls made. */
  candidates: number;
  attempts: number;
  /** What was asked, what answered, and what was found. */
  note: string;
}

/** Heads stay unique for at least this many requests of one class. */
const HEAD_CAPACITY = 2 ** 24;
/** Tag words make heads of different runs differ: at least this many combinations. */
const TAG_CAPACITY = 2 ** 16;

/** Index and tag words for a vocabulary of `size` words (size ≥ 2). */
export function headWords(size: number): { index: number; tag: number } {
  const bits = Math.log2(size);
  return { index: Math.ceil(Math.log2(HEAD_CAPACITY) / bits - 1e-9), tag: Math.ceil(Math.log2(TAG_CAPACITY) / bits - 1e-9) };
}

/** The vocabulary assumed when nothing could be counted: one token per word, no template (engine-sim's rule). */
export function uncountedVocabulary(note: string): PromptVocabulary {
  const h = headWords(VOCABULARY.length);
  return {
    method: 'words-unverified',
    words: VOCABULARY,
    opener: VOCABULARY[0]!,
    opener_tokens: 1,
    request_tokens: 0,
    turn_tokens: 0,
    head_words: h.index + h.tag,
    index_words: h.index,
    candidates: 0,
    attempts: 0,
    note,
  };
}

/** Tokens of a message `opener` + `words` words: what a message built by `MessageText` costs. */
export function messageTokens(v: PromptVocabulary, words: number): number {
  return v.opener_tokens + words;
}

/** `count` words drawn from `rng` out of `words`. */
export function drawFrom(words: readonly string[], rng: Rng, count: number): string[] {
  return Array.from({ length: count }, () => words[Math.floor(rng.next() * words.length)]!);
}

/**
 * A seeded stream of vocabulary words, kept as one growing text (text of N words is its first N):
 * a long context's filler is then a slice of that text, not a join of 100,000 strings per request.
 */
export class WordStream {
  private joined = '';
  /** ends[i]: where word i ends in `joined`. */
  private readonly ends: number[] = [];
  private readonly rng: Rng;

  constructor(
    private readonly words: readonly string[],
    key: string,
  ) {
    this.rng = rngFromKey(key);
  }

  /** Words `from` … `from + count − 1`, joined by spaces ("" for none). */
  text(from: number, count: number): string {
    if (count <= 0) return '';
    let joined = this.joined;
    while (this.ends.length < from + count) {
      joined += (joined === '' ? '' : ' ') + this.words[Math.floor(this.rng.next() * this.words.length)]!;
      this.ends.push(joined.length);
    }
    this.joined = joined;
    return joined.slice(from === 0 ? 0 : this.ends[from - 1]! + 1, this.ends[from + count - 1]);
  }
}

/** The head words (after the opener) of request `index` of a class: index words, then tag words. */
export function headOf(v: PromptVocabulary, runId: string, className: string, index: number): string[] {
  const size = v.words.length;
  const out: string[] = [];
  let rest = index;
  for (let i = 0; i < v.index_words; i++) {
    out.push(v.words[rest % size]!);
    rest = Math.floor(rest / size);
  }
  // Index first: heads of one class differ from their second word on, so they share no cache block.
  const digest = createHash('sha256').update(`${runId}:${className}:head`).digest();
  for (let i = 0; i < v.head_words - v.index_words; i++) out.push(v.words[digest.readUInt16LE(2 * (i % 16)) % size]!);
  return out;
}
