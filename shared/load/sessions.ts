// sessions: multi-turn conversations. Sessions arrive like Poisson requests (rate_per_s or a rate
// pattern per phase); only a session's first turn is scheduled, each later turn follows its
// previous reply by the think time (agent/conversations.ts), so this model yields session starts.
import type { LoadModel } from './model.js';
import { poisson } from './poisson.js';

/** Session arrivals: a (non-)homogeneous Poisson process, as `poisson`. */
export const sessions: LoadModel = {
  closedLoop: false,
  arrivals: poisson.arrivals!,
};
