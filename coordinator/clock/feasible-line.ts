// The offset line every probe allows (pure). A probe does not only estimate the offset: whatever
// the path's asymmetry, the agent read T2 after we sent at T1 and read T3 before we received at T4.
// For an agent clock θ(t) = agent − ours that drifts linearly, that is exact at each instant:
//   θ(T1) ≤ T2 − T1   and   θ(T4) ≥ T3 − T4,
// two half-planes in (offset, drift) per probe, and only lines in every one are possible
// (clock/line-polygon.ts). A stalled probe's bounds are wide and cost nothing; the tightest probes
// decide — which a least-squares line cannot do when even its lowest-delay quarter carries
// milliseconds of one-sided delay (a loaded machine). The line taken is the middle of the offsets
// allowed at each end of the probes' stretch; the half-range of the drifts says how well the drift
// is known, and the offset's range at any instant is exact at the polygon's vertices.

import type { ProbeSample } from '../../shared/clock.js';
import { CLOCK_DRIFT_LIMIT, centreLine, driftRange, linePolygon, type OffsetBound, offsetRangeAt } from './line-polygon.js';

/** A line through the probes' bounds. */
export interface FeasibleLine {
  /** The drift (fraction; × 1e6 for ppm): the middle of the drifts allowed. */
  slope: number;
  /** Half the range of the slopes every bound allows (fraction): the drift is known to ± this. */
  slopeHalfRange: number;
  /** The offset (ns) at our instant `nowNs`. */
  at(nowNs: bigint): number;
  /** The lowest and highest offset any line through the bounds takes at our instant `nowNs` (exact). */
  rangeAt(nowNs: bigint): [number, number];
  /** The largest distance, from the first probe's T1 to the last one's T4, between at() and any offset the bounds allow. */
  uncertaintyNs: number;
}

/** A probe's two bounds, each at its own instant (ns from `t0`). */
export function probeBounds(p: ProbeSample, t0: bigint): OffsetBound[] {
  const inf = Number.POSITIVE_INFINITY;
  return [
    { t: Number(p.t1 - t0), lo: -inf, hi: Number(p.t2 - p.t1) },
    { t: Number(p.t4 - t0), lo: Number(p.t3 - p.t4), hi: inf },
  ];
}

/**
 * The line through every probe's bounds, or null when there are fewer than two probes, the
 * bounds admit no line (the clock stepped, or a probe is not what it claims), or they do not
 * bound the drift both ways within ±1%.
 */
export function feasibleLine(probes: readonly ProbeSample[]): FeasibleLine | null {
  if (probes.length < 2) return null;
  const t0 = probes[0]!.t1;
  const bounds = probes.flatMap((p) => probeBounds(p, t0));
  const ts = bounds.map((b) => b.t);
  const [tMin, tMax] = [Math.min(...ts), Math.max(...ts)];
  const poly = linePolygon(bounds, (tMin + tMax) / 2, CLOCK_DRIFT_LIMIT);
  if (poly.vertices.length === 0) return null;
  const drift = driftRange(poly);
  if (!drift.bounded) return null;
  const centre = centreLine(poly, tMin, tMax);
  const rel = (ns: bigint): number => Number(ns - t0);
  return {
    slope: (drift.lo + drift.hi) / 2,
    slopeHalfRange: (drift.hi - drift.lo) / 2,
    at: (nowNs) => centre.at(rel(nowNs)),
    rangeAt: (nowNs) => offsetRangeAt(poly, rel(nowNs)),
    uncertaintyNs: centre.halfWidth,
  };
}
