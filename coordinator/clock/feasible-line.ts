// The offset line every probe allows (pure). A probe does not only estimate the offset: whatever
// the path's asymmetry, the agent's clock at T2 sat within half the round trip of its estimate
// (T2 lies between T1 and T4 − (T3 − T2) in real time). So each probe bounds the true offset at
// its instant, and only lines that pass through every bound are possible. A stalled probe's bound
// is wide and costs nothing; the tightest probes decide — which a least-squares line cannot do
// when even its lowest-delay quarter carries milliseconds of one-sided delay (a loaded machine).
// The line taken is the middle of the possible slopes, and the middle of the possible offsets at
// that slope; the half-range of the slopes says how well the drift is known.

import type { ProbeSample } from '../../shared/clock.js';
import { probeOffset } from '../../shared/clock.js';

/** A line through the probes' bounds. */
export interface FeasibleLine {
  /** The drift (fraction; × 1e6 for ppm). */
  slope: number;
  /** Half the range of the slopes every bound allows (fraction): the drift is known to ± this. */
  slopeHalfRange: number;
  /** The offset (ns) at our instant `nowNs`. */
  at(nowNs: bigint): number;
}

/** One instant's bound on the offset (ns from the first instant); either side may be infinite. */
export interface OffsetBound {
  t: number;
  lo: number;
  hi: number;
}

/** Every line through the bounds: the slopes they allow and, at the middle slope, its offset range. */
export interface BoundsLine {
  slopeLo: number;
  slopeHi: number;
  slope: number;
  /** The offsets at t = 0 every bound allows at `slope`. */
  aLo: number;
  aHi: number;
}

/**
 * The line through every probe's bound, or null when there are fewer than two probes at distinct
 * instants, or the bounds admit no line (the clock stepped, or a probe is not what it claims).
 */
export function feasibleLine(probes: readonly ProbeSample[]): FeasibleLine | null {
  if (probes.length < 2) return null;
  const t0 = probes[0]!.t1;
  const pts = probes.map((p) => {
    const { offsetNs, delayNs } = probeOffset(p);
    const half = Math.max(0, delayNs) / 2;
    return { t: Number(p.t1 + (p.t4 - p.t1) / 2n - t0), lo: offsetNs - half, hi: offsetNs + half };
  });
  const line = lineThroughBounds(pts);
  if (!line) return null;
  const a = (line.aLo + line.aHi) / 2;
  return {
    slope: line.slope,
    slopeHalfRange: (line.slopeHi - line.slopeLo) / 2,
    at: (nowNs) => a + line.slope * Number(nowNs - t0),
  };
}

/**
 * The lines through every bound (a bound may be one-sided: an infinite lo or hi), or null when
 * no line passes through them all or the slope is not bounded from both sides.
 */
export function lineThroughBounds(bounds: readonly OffsetBound[]): BoundsLine | null {
  const pts = [...bounds].sort((a, b) => a.t - b.t);
  // Fourier–Motzkin on (offset at 0, slope): every pair i < j bounds the slope from both sides.
  let sLo = Number.NEGATIVE_INFINITY;
  let sHi = Number.POSITIVE_INFINITY;
  for (let i = 0; i < pts.length; i++)
    for (let j = i + 1; j < pts.length; j++) {
      const dt = pts[j]!.t - pts[i]!.t;
      if (dt <= 0) continue;
      const up = (pts[j]!.lo - pts[i]!.hi) / dt;
      const down = (pts[j]!.hi - pts[i]!.lo) / dt;
      if (!Number.isNaN(up)) sLo = Math.max(sLo, up);
      if (!Number.isNaN(down)) sHi = Math.min(sHi, down);
    }
  if (!Number.isFinite(sLo) || !Number.isFinite(sHi) || sLo > sHi) return null;
  const slope = (sLo + sHi) / 2;
  let aLo = Number.NEGATIVE_INFINITY;
  let aHi = Number.POSITIVE_INFINITY;
  for (const p of pts) {
    aLo = Math.max(aLo, p.lo - slope * p.t);
    aHi = Math.min(aHi, p.hi - slope * p.t);
  }
  if (!Number.isFinite(aLo) || !Number.isFinite(aHi)) return null;
  return { slopeLo: sLo, slopeHi: sHi, slope, aLo, aHi };
}
