// Keeping a drifting agent on the coordinator's timeline during a run (pure). The in-run probes
// measure the agent's raw clock against ours; fitted over the recent ones, they say how far the
// agent's raw run clock has run ahead since the join offset was taken (its drift times the time
// since). The agent slews its run timeline back (agent/run.ts) and reports how far it has; the
// rate it is told is the fitted drift plus the error left, spread over SLEW_HORIZON_S, so the
// error decays smoothly and no stamp ever steps.

import type { OffsetLine } from '../../figures/clock-types.js';
import type { ProbeSample } from '../../shared/clock.js';
import { probeOffset } from '../../shared/clock.js';
import { feasibleLine } from './feasible-line.js';

/** Over how many seconds an error left is slewed away. */
export const SLEW_HORIZON_S = 5;
/** Probes (one a second) the fit looks back over: drift that wanders (temperature) is followed. */
const FIT_WINDOW = 60;
/**
 * Fewest probes a fit takes: eight, so that even the first fit drops the worst half. The first
 * probes span the start, when both ends are busiest; fitted from four with none dropped, a loaded
 * machine's stalled probes steered an agent 5 ms off for 15 s (chaos soak, 2026-12-04).
 */
const MIN_PROBES = 8;
/** Fewest probes a fit keeps (its lowest-delay ones). */
const MIN_KEPT = 4;

/** One steering decision for one agent. */
export interface SlewStep {
  /** Rate the agent is told to slew at (ppm of its run clock). */
  ratePpm: number;
  /** The fitted drift of the agent's clock against ours (ppm; positive: it runs fast). */
  driftPpm: number;
  /** How far the agent's run timeline is from ours now, after its correction so far (ns). */
  errorNs: number;
}

/**
 * The line through the bounds of the last FIT_WINDOW probes, or where they admit none a
 * least-squares line through their lowest-delay quarter (at least MIN_KEPT); null until there are
 * MIN_PROBES of them (or they were all taken at one instant).
 */
export function fitOffsetLine(probes: readonly ProbeSample[]): OffsetLine | null {
  if (probes.length < MIN_PROBES) return null;
  const recent = probes.slice(-FIT_WINDOW);
  // The line every probe's bound allows (clock/feasible-line.ts): in the seeded simulation of a
  // loaded machine below (clock/slew.test.ts) it steered to a true residual p99 of 0.95 ms where the
  // least-squares line alone gave 1.29 ms. Bounds that admit no line (a stepped clock) fall back.
  const feasible = feasibleLine(recent);
  if (feasible) return feasible;
  const t0 = recent[0]!.t1;
  // The lowest-delay quarter: queueing only ever adds delay, and asymmetric delay is what biases
  // an offset (a loaded machine stalls many probes by milliseconds: the half kept too many).
  const measured = recent
    .map((s) => ({ t: Number(s.t1 - t0), ...probeOffset(s) }))
    .sort((a, b) => a.delayNs - b.delayNs)
    .slice(0, Math.max(MIN_KEPT, Math.ceil(recent.length / 4)));
  const n = measured.length;
  const mt = measured.reduce((s, m) => s + m.t, 0) / n;
  const mo = measured.reduce((s, m) => s + m.offsetNs, 0) / n;
  const sxx = measured.reduce((s, m) => s + (m.t - mt) ** 2, 0);
  if (sxx <= 0) return null;
  const slope = measured.reduce((s, m) => s + (m.t - mt) * (m.offsetNs - mo), 0) / sxx;
  return { slope, at: (nowNs) => mo + slope * (Number(nowNs - t0) - mt) };
}

/**
 * The next step for an agent whose join offset was `joinOffsetNs`, given its in-run probes, our
 * clock now, and the correction it reported applying. Null until there are enough probes.
 */
export function slewStep(probes: readonly ProbeSample[], joinOffsetNs: number, nowNs: bigint, appliedNs: number): SlewStep | null {
  const line = fitOffsetLine(probes);
  if (!line) return null;
  const aheadNs = line.at(nowNs) - joinOffsetNs;
  const errorNs = aheadNs - appliedNs;
  return { ratePpm: (line.slope + errorNs / (SLEW_HORIZON_S * 1e9)) * 1e6, driftPpm: line.slope * 1e6, errorNs };
}
