// Both validity gates of a run while it is live: the evidence gathered from its collector, schedule and
// scrapes (input.ts), judged by the pure gates of figures/validity/.
import { dataQuality } from '../../figures/validity/data-quality.js';
import { sloProof } from '../../figures/validity/slo-proof.js';
import type { Gate } from '../../figures/validity/types.js';
import type { RunFacts } from './input.js';
import { validityInput } from './input.js';

export type { RunFacts } from './input.js';

/** Both gates of one run. */
export function assessRun(facts: RunFacts): { data_quality: Gate; slo_proof: Gate } {
  const input = validityInput(facts);
  return { data_quality: dataQuality(input), slo_proof: sloProof(input) };
}
