// concurrency: a closed loop that keeps N requests in flight. A pattern is sampled per noise
// bucket and rounded, so the target is an integer step function every agent can split exactly.

import type { ConcurrencyStep, LoadModel } from './model.js';
import { secondsToNs } from './model.js';
import { compilePattern, NOISE_BUCKET_S } from './pattern.js';

/** Closed-loop concurrency, constant or patterned. */
export const concurrency: LoadModel = {
  closedLoop: true,
  concurrency(phase, rng) {
    const c = phase.concurrency!;
    if (typeof c === 'number') return [{ atNs: secondsToNs(phase.start_s), value: c }];
    const pattern = compilePattern(c, phase.duration_s, rng);
    const steps: ConcurrencyStep[] = [];
    for (let t = 0; t < phase.duration_s; t += NOISE_BUCKET_S) {
      const value = Math.max(0, Math.round(pattern.valueAt(t + NOISE_BUCKET_S / 2)));
      if (steps.at(-1)?.value !== value) steps.push({ atNs: secondsToNs(phase.start_s + t), value });
    }
    return steps;
  },
};
