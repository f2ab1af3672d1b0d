// Seeded words for per-request prompts: a class's word stream as a growing pool (text of N words is
// the pool's first N words, one engine-sim token each; the stream's key is PromptBuilder's).

import { VOCABULARY } from '../shared/prompt-text.js';
import type { Rng } from '../shared/rng.js';
import { rngFromKey } from '../shared/rng.js';

/** `count` words drawn from `rng` (the one place agent code reads the vocabulary). */
export function drawWords(rng: Rng, count: number): string[] {
  return Array.from({ length: count }, () => VOCABULARY[Math.floor(rng.next() * VOCABULARY.length)]!);
}

/** Words `from` … `from + count` of a class's stream. */
export class WordPool {
  private readonly pool: string[] = [];
  private readonly rng: Rng;

  constructor(seed: number, className: string) {
    this.rng = rngFromKey(`${seed}:${className}:prompt`);
  }

  /** `count` words starting at word `from`. */
  words(from: number, count: number): string[] {
    if (this.pool.length < from + count) this.pool.push(...drawWords(this.rng, from + count - this.pool.length));
    return this.pool.slice(from, from + Math.max(0, count));
  }
}
