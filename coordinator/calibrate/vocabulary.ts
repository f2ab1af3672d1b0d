// Finding a target's token-exact vocabulary before any load, through its own tokenizer (its
// tokenize endpoint or the plan's tokenizer file): the cost of an empty request (chat template,
// BOS), an opener word and its cost at the start of a message, then the candidate words that each
// count exactly one token after a space in running text. Candidates are counted in groups: a group
// of k words after the opener that adds exactly k tokens has only one-token words in it (no word
// costs less than one), and a group that adds more is split in two until the culprits are alone.
// On a modern BPE vocabulary nearly every candidate is one token and a few dozen counts settle it.

import { VOCABULARY } from '../../shared/prompt-text.js';
import type { PromptVocabulary } from '../../shared/prompt-vocabulary.js';
import { drawFrom, headWords } from '../../shared/prompt-vocabulary.js';
import { rngFromKey } from '../../shared/rng.js';
import type { CountText } from './server-tokenize.js';

// Common short English words beyond the filler vocabulary: the more of them count one token, the
// fewer words a unique head needs.
const MORE_WORDS = (
  'again against air also always another area around asked away back began being best better between big both boy ' +
  'came car case change children city close come country course cut day days different does done door end enough ' +
  'ever every eye face fact family far feet few find fire five found four free full gave general get give go going ' +
  'got government great group hand hands head help here high him himself his home house however idea important ' +
  'interest keep kind knew know land large last later least left less let life light line live long look looked ' +
  'lot love main making matter mean men might mind money morning mother move mr much name need never new next ' +
  'night nothing number off often old once only open order other others own part past place point possible power ' +
  'present problem public put question quite rather read real really right room said same saw say school second ' +
  'see seemed seen set several shall short show side since small social something sometimes soon still story ' +
  'system take taken tell than that thing things think thought three today together told took toward turn under ' +
  'until upon us use used want war water week went what while white whole why without woman women word words work ' +
  'world year yet young'
).split(' ');

/** Every candidate word, in the order they are tried (the filler vocabulary first). */
export const CANDIDATE_WORDS = [...new Set([...VOCABULARY, ...MORE_WORDS])];
/** Openers tried in turn: the first that costs one token at the start of a message, else the cheapest. */
const OPENERS = ['The', 'the', 'A', 'In', 'This', 'We', 'It', 'And'];
/** Candidates per first count; a group that counts more is halved. */
const GROUP = 32;
/** Counts in flight at once (each a tokenize call, or a local count). */
const PARALLEL = 8;
/** The whole search may make at most this many counts. */
const MAX_COUNTS = 800;
/** Words of running text counted together to confirm the vocabulary before it is used. */
const CONFIRM_WORDS = 512;
/** With fewer one-token words there is no exact text (a unique head needs two). */
export const MIN_WORDS = 2;

/** A vocabulary, or why none was found. */
export type FoundVocabulary = { vocabulary: PromptVocabulary } | { vocabulary: null; note: string; attempts: number };

/** Searches the target for a token-exact vocabulary, counting with `count` (described by `method` and `note`). */
export async function findVocabulary(count: CountText, method: PromptVocabulary['method'], note: string): Promise<FoundVocabulary> {
  let attempts = 0;
  const counted = async (content: Parameters<CountText>[0]): Promise<number> => {
    if (++attempts > MAX_COUNTS) throw new Error(`more than ${MAX_COUNTS} counts`);
    return count(content);
  };
  try {
    const empty = await counted('');
    let opener = { word: OPENERS[0]!, tokens: Number.POSITIVE_INFINITY };
    for (const word of OPENERS) {
      const tokens = (await counted(word)) - empty;
      if (tokens >= 1 && tokens < opener.tokens) opener = { word, tokens };
      if (tokens === 1) break;
    }
    if (!Number.isFinite(opener.tokens)) return { vocabulary: null, note: `no opener word counted a token (${note})`, attempts };
    const base = empty + opener.tokens;
    const adds = async (words: readonly string[]): Promise<number> => (await counted(`${opener.word} ${words.join(' ')}`)) - base;
    const words = await oneTokenWords(CANDIDATE_WORDS, adds);
    if (words.length < MIN_WORDS)
      return {
        vocabulary: null,
        note: `${words.length} of ${CANDIDATE_WORDS.length} candidate words count one token after a space (${MIN_WORDS} needed) (${note})`,
        attempts,
      };
    // One-token alone, one-token together: running text of the found words counts one per word.
    const sample = drawFrom(words, rngFromKey('vocabulary-confirm'), CONFIRM_WORDS);
    const together = await adds(sample);
    if (together !== CONFIRM_WORDS)
      return {
        vocabulary: null,
        note: `${CONFIRM_WORDS} words of the found vocabulary counted ${together} tokens together (${note})`,
        attempts,
      };
    // A further turn of a conversation: an assistant and a user message, each the opener alone.
    const o = opener.word;
    const turn =
      (await counted([
        { role: 'user', content: o },
        { role: 'assistant', content: o },
        { role: 'user', content: o },
      ])) -
      base -
      2 * opener.tokens;
    const h = headWords(words.length);
    return {
      vocabulary: {
        method,
        words,
        opener: o,
        opener_tokens: opener.tokens,
        request_tokens: empty,
        turn_tokens: turn,
        head_words: h.index + h.tag,
        index_words: h.index,
        candidates: CANDIDATE_WORDS.length,
        attempts,
        note: `${words.length} of ${CANDIDATE_WORDS.length} candidate words count one token after a space; an empty request counts ${empty}, the opener "${o}" ${opener.tokens}, a further turn's template ${turn}; heads are ${1 + h.index + h.tag} words (${note})`,
      },
    };
  } catch (err) {
    return { vocabulary: null, note: `the vocabulary search failed: ${(err as Error).message} (${note})`, attempts };
  }
}

/**
 * The words of `candidates` that each add exactly one token (`adds` counts what a group adds), in
 * candidate order. A group's halves add what the group adds, so halving a group costs one count:
 * the second half's is the difference (about one count per word that is not one token).
 */
export async function oneTokenWords(candidates: readonly string[], adds: (words: readonly string[]) => Promise<number>): Promise<string[]> {
  const good = new Set<string>();
  const limit = limiter(PARALLEL);
  const settle = async (group: readonly string[], added: number): Promise<void> => {
    if (added === group.length) for (const w of group) good.add(w);
    if (added === group.length || group.length === 1) return;
    const first = group.slice(0, group.length >> 1);
    const a = await limit(() => adds(first));
    await Promise.all([settle(first, a), settle(group.slice(first.length), added - a)]);
  };
  const groups: string[][] = [];
  for (let i = 0; i < candidates.length; i += GROUP) groups.push(candidates.slice(i, i + GROUP));
  await Promise.all(groups.map(async (g) => settle(g, await limit(() => adds(g)))));
  return candidates.filter((w) => good.has(w));
}

// At most `n` of the calls it is given run at once.
function limiter(n: number): <T>(f: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (f) => {
    if (running >= n) await new Promise<void>((r) => waiting.push(r));
    running++;
    try {
      return await f();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}
