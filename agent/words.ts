// The class's seeded word stream as a growing pool: synthetic text of N words is the pool's first
// N words (one engine-sim token each), the same stream PromptBuilder draws from.

import type { Rng } from '../shared/rng.js';
import { rngFromKey } from '../shared/rng.js';
import { VOCABULARY } from './prompt.js';

/** Words `from` … `from + count` of a class's stream. */
export class WordPool {
  private readonly pool: string[] = [];
  private readonly rng: Rng;

  constructor(seed: number, className: string) {
    this.rng = rngFromKey(`${seed}:${className}:prompt`);
  }

  /** `count` words starting at word `from`. */
  words(from: number, count: number): string[] {
    while (this.pool.length < from + count) this.pool.push(VOCABULARY[Math.floor(this.rng.next() * VOCABULARY.length)]!);
    return this.pool.slice(from, from + Math.max(0, count));
  }
}
