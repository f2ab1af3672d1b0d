// The residual of a steered agent's run timeline, measured by probes the steering never saw
// (pure). Every HOLD_OUT_EVERY-th in-run probe of an agent is held out of the drift fit and takes
// no steering step; with the correction the agent's run timeline had at the probe's T2 (its
// reply carries it), such a probe measures the run timeline itself against ours. A residual read
// through the same probes that steer would only say how well the line fits its own points.

import type { HeldOutResidual, ResidualSummary } from '../../figures/clock-types.js';
import type { ProbeSample } from '../../shared/clock.js';
import { probeOffset } from '../../shared/clock.js';
import { CLOCK_DRIFT_LIMIT } from './line-polygon.js';

/** One in-run probe in this many is held out of the fit (the rest steer). */
export const HOLD_OUT_EVERY = 4;
/** A held-out probe is this many probes one after another, the shortest round trip kept (a loaded machine stalls most single ones). */
export const HELD_OUT_BURST = 4;

/** Whether an agent's `k`-th in-run probe (0-based, its own count) is held out: the 4th, 8th, … */
export function isHeldOut(k: number): boolean {
  return k % HOLD_OUT_EVERY === HOLD_OUT_EVERY - 1;
}

/**
 * The residual one held-out probe measured, or null when it cannot measure one: the reply
 * carried no correction (the agent had not armed), or the probe was taken before the start.
 */
export function heldOutResidual(p: ProbeSample, startOffsetNs: number, startNs: bigint): HeldOutResidual | null {
  if (p.correctionNs === undefined) return null;
  const mid = p.t1 + (p.t4 - p.t1) / 2n;
  if (mid < startNs) return null;
  const { offsetNs, delayNs } = probeOffset(p);
  return {
    t_s: Math.round(Number(mid - startNs) / 1e6) / 1e3,
    residual_ns: Math.round(offsetNs - startOffsetNs - p.correctionNs),
    bound_ns: Math.ceil(residualBoundNs(Math.max(0, delayNs), Math.max(0, Number(p.t3 - p.t2)))),
  };
}

/**
 * How far a probe's offset can be from the true offset at its round trip's midpoint: half the
 * round trip for a clock that keeps time, and a little more for one that drifts over it (the legs
 * are (1 ± drift) long on the agent's clock): with legs u and w and the agent's own time between
 * T2 and T3 p, the error is (u − w)(1 + b)/2 and the round trip u + w − p·b/(1 + b), so for
 * |b| ≤ B it is at most (delay/2)(1 + B) + p·B(1 + B)/(2(1 − B)).
 */
export function residualBoundNs(delayNs: number, agentHoldNs: number, drift = CLOCK_DRIFT_LIMIT): number {
  return (delayNs / 2) * (1 + drift) + (agentHoldNs * drift * (1 + drift)) / (2 * (1 - drift));
}

function nearestRank(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/** Percentiles (nearest rank) of |residual|, its largest proven excess, and how many probes could judge `toleranceNs`. */
export function summarizeResiduals(samples: readonly HeldOutResidual[], toleranceNs: number): ResidualSummary {
  if (samples.length === 0)
    return {
      probes: 0,
      informative: 0,
      p50_ns: null,
      p99_ns: null,
      max_ns: null,
      proven_max_ns: null,
      proven_max_at_s: null,
      end_ns: null,
    };
  const abs = samples.map((x) => Math.abs(x.residual_ns)).sort((a, b) => a - b);
  let worst = samples[0]!;
  for (const x of samples) if (Math.abs(x.residual_ns) - x.bound_ns > Math.abs(worst.residual_ns) - worst.bound_ns) worst = x;
  return {
    probes: samples.length,
    informative: samples.filter((x) => x.bound_ns <= toleranceNs).length,
    p50_ns: nearestRank(abs, 0.5),
    p99_ns: nearestRank(abs, 0.99),
    max_ns: abs.at(-1)!,
    proven_max_ns: Math.abs(worst.residual_ns) - worst.bound_ns,
    proven_max_at_s: worst.t_s,
    end_ns: Math.abs(samples.at(-1)!.residual_ns),
  };
}
