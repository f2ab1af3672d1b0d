// LoRA adapters: a class may spread its requests over several model names (class.adapters). Each
// request's model is fixed by the seed and its index, in exact proportion to the integer weights:
// requests are taken in cycles of Σweights, and each cycle holds every adapter exactly `weight`
// times in a seeded order. Over any whole number of cycles the counts equal the weights exactly;
// in a partial last cycle each adapter is at most `weight` short. The same on every agent.
import type { TrafficClass } from './plan.js';
import type { Rng } from './rng.js';
import { rngFromKey } from './rng.js';

/** One adapter of a class: the model name requests carry and its integer weight. */
export interface LoraWeight {
  model: string;
  weight: number;
}

/** Which adapter each request of one class uses. */
export class LoraPicker {
  private readonly cycle: number;
  private cachedCycle = -1;
  private order: number[] = [];

  constructor(
    private readonly seed: number,
    private readonly className: string,
    readonly adapters: readonly LoraWeight[],
  ) {
    this.cycle = adapters.reduce((n, a) => n + a.weight, 0);
  }

  /** The index (into adapters) of request `requestIndex`'s adapter. */
  at(requestIndex: number): number {
    const c = Math.floor(requestIndex / this.cycle);
    if (c !== this.cachedCycle) {
      this.order = shuffled(this.adapters, rngFromKey(`${this.seed}:${this.className}:adapters:${c}`));
      this.cachedCycle = c;
    }
    return this.order[requestIndex % this.cycle]!;
  }

  /** The model name of request `requestIndex`. */
  modelAt(requestIndex: number): string {
    return this.adapters[this.at(requestIndex)]!.model;
  }
}

/** The picker of a class with adapters, else undefined. */
export function loraPicker(seed: number, cls: TrafficClass): LoraPicker | undefined {
  return cls.adapters && cls.adapters.length > 0 ? new LoraPicker(seed, cls.name, cls.adapters) : undefined;
}

// Every adapter index `weight` times, Fisher–Yates shuffled.
function shuffled(adapters: readonly LoraWeight[], rng: Rng): number[] {
  const out = adapters.flatMap((a, i) => Array<number>(a.weight).fill(i));
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
