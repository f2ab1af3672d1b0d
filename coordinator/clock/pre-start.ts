// Fitting a steered agent's drift before its first request (pure). The join's 32 probes are a
// burst at one instant: they place the offset but say nothing of its slope. Fitted from in-run
// probes alone, the first fit came eight seconds into the load, after the agent had run
// uncorrected, and on a loaded machine its slope could be thousands of ppm off for the next
// seconds. So steered agents are probed a few times a second while they prepare, the line
// through those probes gives the offset at the start instant, and the agent starts on it and is
// slewed at the fitted drift from its first request on.

import type { ProbeSample } from '../../shared/clock.js';
import { feasibleLine } from './feasible-line.js';
import { fitOffsetLine } from './slew.js';

/** Probes each steered agent gets before the start (at least; more while it is still preparing). */
export const PRE_START_PROBES = 16;
/** Their spacing: 16 probes span about 4 s. */
export const PRE_START_INTERVAL_MS = 250;
/**
 * How well the drift must be known before the start: the half-range of the slopes the probes'
 * bounds allow (feasible-line.ts). 100 ppm is 0.3 ms over the ~3 s from the last pre-start probe
 * to the start; on a quiet link (bounds ~0.1 ms) 16 probes over 4 s give about 50 ppm.
 */
export const PRE_START_DRIFT_HALF_RANGE_PPM = 100;
/** How long after the agents are prepared the pre-start probes may go on to reach that (a loaded machine's bounds are wide). */
export const PRE_START_MAX_WAIT_MS = 10_000;

/** Whether an agent's pre-start probes know its drift well enough to start on them. */
export function driftKnown(probes: readonly ProbeSample[]): boolean {
  if (probes.length < PRE_START_PROBES) return false;
  const f = feasibleLine(probes);
  return f !== null && f.slopeHalfRange * 1e6 <= PRE_START_DRIFT_HALF_RANGE_PPM;
}

/**
 * The offset the agent starts and is aligned with: the pre-start line's value at the start
 * instant, or the join offset when the probes gave no line.
 */
export function startOffsetNs(probes: readonly ProbeSample[], joinOffsetNs: number, startNs: bigint): number {
  const line = fitOffsetLine(probes);
  return line ? Math.round(line.at(startNs)) : joinOffsetNs;
}
