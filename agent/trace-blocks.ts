// Shared prompt blocks of a trace: hash id h is always the same `blockTokens` words (seeded by
// "<seed>:trace-block:<h>"), so two rows that share leading hash ids send the same leading text
// and a prefix cache sees what production saw. A row's last block may be partial (its input
// length is not a multiple of the block): it is then the block's first words.
import { rngFromKey } from '../shared/rng.js';
import { drawWords } from './words.js';

// Blocks are regenerated after this many distinct ids (2 KB each): memory stays bounded on
// corpora with millions of ids, and the content never depends on what was cached.
const MAX_CACHED_BLOCKS = 4096;

/** The text of hash-id blocks. */
export class TraceBlocks {
  private readonly cache = new Map<number, string[]>();

  constructor(
    private readonly seed: number,
    private readonly blockTokens: number,
  ) {}

  /** The words of block `id`. */
  block(id: number): string[] {
    let words = this.cache.get(id);
    if (!words) {
      const rng = rngFromKey(`${this.seed}:trace-block:${id}`);
      words = drawWords(rng, this.blockTokens);
      if (this.cache.size >= MAX_CACHED_BLOCKS) this.cache.clear();
      this.cache.set(id, words);
    }
    return words;
  }

  /** The first `tokens` words of the row's blocks (fewer if its hash ids cover less). */
  prompt(hashIds: readonly number[], tokens: number): { text: string; words: number } {
    const parts: string[] = [];
    let words = 0;
    for (const id of hashIds) {
      if (words >= tokens) break;
      const take = Math.min(this.blockTokens, tokens - words);
      const block = this.block(id);
      parts.push((take === block.length ? block : block.slice(0, take)).join(' '));
      words += take;
    }
    return { text: parts.join(' '), words };
  }
}
