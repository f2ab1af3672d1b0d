// poisson: exponential gaps at a constant rate, or a non-homogeneous Poisson process over a rate
// pattern by thinning (candidates at the pattern's upper bound, each kept with rate(t)/max).

import type { LoadModel } from './model.js';
import { secondsToNs } from './model.js';
import { compilePattern } from './pattern.js';

/** Poisson arrivals, homogeneous or over a pattern. */
export const poisson: LoadModel = {
  closedLoop: false,
  arrivals(phase, rng, emit) {
    if (phase.rate_per_s !== undefined) {
      for (let t = rng.exponential(phase.rate_per_s); t < phase.duration_s; t += rng.exponential(phase.rate_per_s)) {
        emit(secondsToNs(phase.start_s + t));
      }
      return;
    }
    const pattern = compilePattern(phase.rate!, phase.duration_s, rng);
    if (pattern.max <= 0) return;
    for (let t = rng.exponential(pattern.max); t < phase.duration_s; t += rng.exponential(pattern.max)) {
      if (rng.next() * pattern.max < pattern.valueAt(t)) emit(secondsToNs(phase.start_s + t));
    }
  },
};
