// constant-rate: arrivals evenly spaced at rate_per_s, each due time computed from the phase
// start (start + i·period), never by accumulating ticks.
import type { LoadModel } from './model.js';
import { secondsToNs } from './model.js';

/** Evenly spaced arrivals. */
export const constantRate: LoadModel = {
  closedLoop: false,
  arrivals(phase, _rng, emit) {
    const rate = phase.rate_per_s!;
    const count = Math.ceil(phase.duration_s * rate - 1e-9);
    for (let i = 0; i < count; i++) emit(secondsToNs(phase.start_s + i / rate));
  },
};
