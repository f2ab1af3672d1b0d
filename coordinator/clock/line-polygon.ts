// Pure: every line θ(t) = c + b·(t − t0) that passes through a set of one-sided offset bounds, as
// the convex polygon of its (c, b). Each bound is a half-plane (c + b·(t − t0) ≤ hi, or ≥ lo, at
// the bound's own instant t), so the lines allowed are their intersection: a box clipped by every
// half-plane in turn. The offset's range at any instant, and the drift's, are then the extremes of
// a linear function over the polygon, found at its vertices: solved, not sampled.

/** The largest drift taken for any clock (1%): the box the polygon is clipped from. A clock off by more is broken, not drifting. */
export const CLOCK_DRIFT_LIMIT = 0.01;

/** One instant's bound on the offset (ns from the origin); either side may be infinite. */
export interface OffsetBound {
  t: number;
  lo: number;
  hi: number;
}

/** A vertex of the polygon: c is the offset at t0 (ns), b the drift (fraction). */
export interface LinePoint {
  c: number;
  b: number;
}

/** The lines through a set of bounds. */
export interface LinePolygon {
  t0: number;
  /** The largest drift any line may have (fraction): the box the polygon is clipped from. */
  bLimit: number;
  /** Convex, in order; empty when no line passes every bound. */
  vertices: LinePoint[];
}

interface HalfPlane {
  dt: number;
  /** 1: c + b·dt ≤ v; −1: c + b·dt ≥ v. */
  sign: 1 | -1;
  v: number;
}

function halfPlanes(bounds: readonly OffsetBound[], t0: number, slack: number): HalfPlane[] {
  const out: HalfPlane[] = [];
  for (const p of bounds) {
    if (Number.isFinite(p.hi)) out.push({ dt: p.t - t0, sign: 1, v: p.hi + slack });
    if (Number.isFinite(p.lo)) out.push({ dt: p.t - t0, sign: -1, v: p.lo - slack });
  }
  return out;
}

// How far (c, b) lies on the wrong side of h (≤ 0: inside).
const excess = (h: HalfPlane, q: LinePoint): number => h.sign * (q.c + q.b * h.dt - h.v);

/**
 * The polygon of lines through every bound, each widened by `slack` (ns) on its open side, with a
 * drift within ±bLimit. The starting box's offset side is wide enough never to bind: any line
 * within the drift limit that passes the tightest lower and upper bound lies inside it.
 */
export function linePolygon(bounds: readonly OffsetBound[], t0: number, bLimit: number, slack = 0): LinePolygon {
  const planes = halfPlanes(bounds, t0, slack);
  const his = planes.filter((h) => h.sign === 1).map((h) => h.v);
  const los = planes.filter((h) => h.sign === -1).map((h) => h.v);
  const reach = bLimit * Math.max(0, ...planes.map((h) => Math.abs(h.dt)));
  const values = [...his, ...los];
  const cLo = (values.length ? Math.min(...values) : 0) - reach - 1e9;
  const cHi = (values.length ? Math.max(...values) : 0) + reach + 1e9;
  let poly: LinePoint[] = [
    { c: cLo, b: -bLimit },
    { c: cHi, b: -bLimit },
    { c: cHi, b: bLimit },
    { c: cLo, b: bLimit },
  ];
  for (const h of planes) {
    poly = clip(poly, h);
    if (poly.length === 0) break;
  }
  return { t0, bLimit, vertices: poly };
}

// Sutherland–Hodgman against one half-plane: a convex polygon stays convex.
function clip(poly: readonly LinePoint[], h: HalfPlane): LinePoint[] {
  const out: LinePoint[] = [];
  for (let i = 0; i < poly.length; i++) {
    const p = poly[i]!;
    const q = poly[(i + 1) % poly.length]!;
    const fp = excess(h, p);
    const fq = excess(h, q);
    if (fp <= 0) out.push(p);
    if ((fp < 0 && fq > 0) || (fp > 0 && fq < 0)) {
      const k = fp / (fp - fq);
      out.push({ c: p.c + (q.c - p.c) * k, b: p.b + (q.b - p.b) * k });
    }
  }
  return out;
}

/** The lowest and highest offset at instant t over every line of the polygon (exact: at its vertices). */
export function offsetRangeAt(poly: LinePolygon, t: number): [number, number] {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const v of poly.vertices) {
    const o = v.c + v.b * (t - poly.t0);
    if (o < lo) lo = o;
    if (o > hi) hi = o;
  }
  return [lo, hi];
}

/** The drifts the polygon allows, and whether each side is bounded by the bounds rather than by the box. */
export function driftRange(poly: LinePolygon): { lo: number; hi: number; bounded: boolean } {
  const bs = poly.vertices.map((v) => v.b);
  const lo = Math.min(...bs);
  const hi = Math.max(...bs);
  const edge = poly.bLimit * (1 - 1e-9);
  return { lo, hi, bounded: lo > -edge && hi < edge };
}

/**
 * The smallest slack ε (ns) by which every bound must be widened for some line within the drift
 * limit to pass them all (0 when one already does). For a drift b the best offset sits midway
 * between the highest lower bound and the lowest upper bound, so ε(b) = max(0, (L(b) − U(b)) / 2):
 * L convex, U concave, so ε is convex in b and a golden-section search finds its minimum (to a
 * relative 1e-12 of the drift range: far below a nanosecond over any run).
 */
export function smallestSlack(bounds: readonly OffsetBound[], t0: number, bLimit: number): number {
  const planes = halfPlanes(bounds, t0, 0);
  const gap = (b: number): number => {
    let lower = Number.NEGATIVE_INFINITY;
    let upper = Number.POSITIVE_INFINITY;
    for (const h of planes) {
      const at = h.v - b * h.dt;
      if (h.sign === 1) upper = Math.min(upper, at);
      else lower = Math.max(lower, at);
    }
    return (lower - upper) / 2;
  };
  const phi = (Math.sqrt(5) - 1) / 2;
  let [x0, x1] = [-bLimit, bLimit];
  let m1 = x1 - phi * (x1 - x0);
  let m2 = x0 + phi * (x1 - x0);
  let [g1, g2] = [gap(m1), gap(m2)];
  for (let i = 0; i < 90; i++) {
    if (g1 <= g2) {
      x1 = m2;
      m2 = m1;
      g2 = g1;
      m1 = x1 - phi * (x1 - x0);
      g1 = gap(m1);
    } else {
      x0 = m1;
      m1 = m2;
      g1 = g2;
      m2 = x0 + phi * (x1 - x0);
      g2 = gap(m2);
    }
  }
  return Math.max(0, Math.min(g1, g2, gap(-bLimit), gap(bLimit)));
}

/**
 * The line through the polygon nearest, over [tMin, tMax], to every line it holds: at each end of
 * the stretch the offset is the middle of the polygon's range there (the distance between two
 * lines is linear in t, so the largest is at an end). When that line is not itself in the polygon
 * (a thin, slanted one) the mean of its vertices is taken instead, which is, and its largest
 * distance to any vertex's line is the uncertainty.
 */
export function centreLine(poly: LinePolygon, tMin: number, tMax: number): { at(t: number): number; halfWidth: number; slope: number } {
  const [wLo, wHi] = offsetRangeAt(poly, tMin);
  const [uLo, uHi] = offsetRangeAt(poly, tMax);
  const span = tMax - tMin;
  const w = (wLo + wHi) / 2;
  const u = (uLo + uHi) / 2;
  const b = span > 0 ? (u - w) / span : 0;
  const mid: LinePoint = { c: w + b * (poly.t0 - tMin), b };
  const line = (p: LinePoint) => (t: number) => p.c + p.b * (t - poly.t0);
  if (span === 0 || inside(poly, mid, span)) return { at: line(mid), halfWidth: Math.max(wHi - wLo, uHi - uLo) / 2, slope: b };
  const n = poly.vertices.length;
  const mean = poly.vertices.reduce((m, v) => ({ c: m.c + v.c / n, b: m.b + v.b / n }), { c: 0, b: 0 });
  const at = line(mean);
  let halfWidth = 0;
  for (const v of poly.vertices) for (const t of [tMin, tMax]) halfWidth = Math.max(halfWidth, Math.abs(line(v)(t) - at(t)));
  return { at, halfWidth, slope: mean.b };
}

// Whether q lies in the convex polygon (the drift scaled by the stretch, so both axes are in ns).
function inside(poly: LinePolygon, q: LinePoint, span: number): boolean {
  const vs = poly.vertices;
  let sign = 0;
  for (let i = 0; i < vs.length; i++) {
    const p = vs[i]!;
    const r = vs[(i + 1) % vs.length]!;
    const [ex, ey] = [r.c - p.c, (r.b - p.b) * span];
    const [qx, qy] = [q.c - p.c, (q.b - p.b) * span];
    const cross = ex * qy - ey * qx;
    if (Math.abs(cross) <= 1e-9 * Math.hypot(ex, ey) * Math.hypot(qx, qy)) continue;
    if (sign === 0) sign = Math.sign(cross);
    else if (Math.sign(cross) !== sign) return false;
  }
  return true;
}
