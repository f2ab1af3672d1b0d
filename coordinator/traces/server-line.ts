// Pure: the server's clock placed in the run's clock domain as a line θ(t) = server − run, through
// every joined request's bounds (Cristian), each at its own instant. With θ linear the bounds are
// exact half-planes in (offset, drift), whatever the network's asymmetry and however long the
// request:
//   sent s:          θ(s) ≤ start − s         (the span started after the request left)
//   headers h:       θ(h) ≥ start − h         (…and before the response's headers came back)
//   first content c: θ(c) ≥ first token − c   (the first token left before the client read it)
//   last byte d:     θ(d) ≥ end − d           (the span ended before the client read the last byte)
// The last holds only for a span that ends at its last token (vLLM's llm_request); an HTTP server
// span ends after its last write, so its end bound can be false by that tail whether or not it
// visibly crosses another. It is therefore used only for a span that names no first token, and
// otherwise only checked: the end bounds that cross are counted and said.
// The lines through the bounds form a convex polygon (clock/line-polygon.ts); the offset's range
// at any instant is exact at its vertices. Bounds that cross by at most SLACK_LIMIT_NS (a clock
// that wobbled, a span stamped a little late) are each widened by the smallest slack that admits a
// line, counted, and the uncertainty widened by it; beyond, the clock is 'inconsistent'.
// Memory is constant: each kind of bound keeps its tightest per stretch of the run (a subset of
// the bounds admits every line the whole set does, so the truth stays inside).
import {
  CLOCK_DRIFT_LIMIT,
  centreLine,
  driftRange,
  type LinePolygon,
  linePolygon,
  type OffsetBound,
  offsetRangeAt,
  smallestSlack,
} from '../clock/line-polygon.js';

/** One joined request: the client's stamps in the run's clock domain, the span's on the server's clock (Unix ns). */
export interface JoinedStamps {
  sentNs: bigint;
  /** When the response's first byte (its headers) reached the client. */
  headersNs: bigint;
  /** When the first content reached the client, or null/absent when unknown. */
  firstContentNs?: bigint | null;
  /** When the last byte reached the client, or null when unknown. */
  doneNs: bigint | null;
  serverStartNs: bigint;
  serverEndNs: bigint;
  /** The span's first token on the server's clock (its event, else start + time_to_first_token), or null/absent. */
  serverFirstTokenNs?: bigint | null;
}

/** A larger drift than this is no clock's (1%): the box the drift is sought in, and what an unbounded one is assumed within. */
export const DRIFT_LIMIT_PPM = CLOCK_DRIFT_LIMIT * 1e6;
/** Bounds crossing by up to this much (each widened by half of it at most) still give a clock. */
export const SLACK_LIMIT_NS = 1_000_000;

/** How many bounds of each kind the fit used, and the end bounds that were only checked. */
export interface BoundCounts {
  sent: number;
  headers: number;
  first_token: number;
  /** End bounds in the fit: spans that name no first token. */
  end: number;
  /** End bounds only checked: spans with a first token. */
  end_checked: number;
}

/** What the second pass over the requests finds against the fitted clock. */
export interface CrossingTally {
  /**
   * When the fit needed slack: the bounds that cross, at the fitted drift, the other side's
   * tightest (lower bounds above the lowest upper one, or upper bounds below the highest lower
   * one, whichever are fewer: the few that disagree with the rest), and the largest crossing.
   */
  crossing: number;
  crossingMaxNs: number;
  /** Checked end bounds above every line the fit allows: spans that end after the client read their last byte. */
  endCrossing: number;
  endCrossingMaxNs: number;
}

/** The server's clock in the run's clock domain, as far as the joined requests bound it. */
export type ServerClock =
  | {
      kind: 'fitted';
      /** 'line': the bounds bound the drift both ways; 'drift-unbounded': they do not (it is assumed within ±DRIFT_LIMIT_PPM). */
      model: 'line' | 'drift-unbounded';
      /** θ (ns, server − run) at a run instant: the fitted line. */
      offsetAt(runNs: bigint): number;
      /** The lowest and highest θ any line through the (widened) bounds takes at a run instant. */
      rangeAt(runNs: bigint): [number, number];
      /** θ at the middle of the joined requests' instants (their sends to their last bytes). */
      offsetNs: number;
      /** The largest distance, from the first request's send to the last one's last byte, from the fitted θ to any θ the bounds allow, plus the slack. */
      uncertaintyNs: number;
      /** The middle of the drifts allowed; null when unbounded. */
      driftPpm: number | null;
      driftUncertaintyPpm: number | null;
      /** The drifts allowed (ppm), clipped to ±DRIFT_LIMIT_PPM on an unbounded side. */
      driftRangePpm: [number, number];
      /** How much each bound was widened for a line to pass them all (0: none needed). */
      slackNs: number;
      bounds: BoundCounts;
      requests: number;
      /** Second pass: one joined request's bounds against the fitted clock. */
      observe(s: JoinedStamps): void;
      tally(): CrossingTally;
    }
  | { kind: 'inconsistent'; requests: number; reason: string; slackNs: number; bounds: BoundCounts }
  | { kind: 'none'; requests: 0 };

const BUCKETS = 256;
const KINDS = ['sent', 'headers', 'first_token', 'end', 'end_checked'] as const;
type Kind = (typeof KINDS)[number];

/** One request's bounds, each at its own instant (ns from origin); the end bound apart, used or checked. */
export function requestBounds(s: JoinedStamps, originNs: bigint): { kind: Kind; t: number; lo: number; hi: number }[] {
  const rel = (ns: bigint): number => Number(ns - originNs);
  const inf = Number.POSITIVE_INFINITY;
  const out: { kind: Kind; t: number; lo: number; hi: number }[] = [
    { kind: 'sent', t: rel(s.sentNs), lo: -inf, hi: Number(s.serverStartNs - s.sentNs) },
    { kind: 'headers', t: rel(s.headersNs), lo: Number(s.serverStartNs - s.headersNs), hi: inf },
  ];
  const firstKnown = s.firstContentNs != null && s.serverFirstTokenNs != null;
  if (firstKnown)
    out.push({ kind: 'first_token', t: rel(s.firstContentNs!), lo: Number(s.serverFirstTokenNs! - s.firstContentNs!), hi: inf });
  if (s.doneNs !== null)
    out.push({ kind: firstKnown ? 'end_checked' : 'end', t: rel(s.doneNs), lo: Number(s.serverEndNs - s.doneNs), hi: inf });
  return out;
}

/** Folds joined requests into bucketed bounds; `result()` fits the line. */
export class ServerClockFit {
  /** Per kind and bucket: the tightest value (lo, or hi for 'sent') and its instant. */
  private readonly value = KINDS.map((k) =>
    new Float64Array(BUCKETS).fill(k === 'sent' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY),
  );
  private readonly at = KINDS.map(() => new Float64Array(BUCKETS));
  private readonly counts: BoundCounts = { sent: 0, headers: 0, first_token: 0, end: 0, end_checked: 0 };
  private n = 0;
  /** The first and last instant of any bound, checked ones included: the stretch the uncertainty is stated over. */
  private tMin = Number.POSITIVE_INFINITY;
  private tMax = Number.NEGATIVE_INFINITY;
  private readonly bucketNs: number;

  /** `originNs`: the run's start; `lengthNs`: how long its requests span (the buckets' extent). */
  constructor(
    private readonly originNs: bigint,
    lengthNs: number,
  ) {
    this.bucketNs = Math.max(1, lengthNs / BUCKETS);
  }

  add(s: JoinedStamps): void {
    for (const b of requestBounds(s, this.originNs)) {
      const k = KINDS.indexOf(b.kind);
      const i = Math.min(BUCKETS - 1, Math.max(0, Math.floor(b.t / this.bucketNs)));
      const v = b.kind === 'sent' ? b.hi : b.lo;
      const tighter = b.kind === 'sent' ? v < this.value[k]![i]! : v > this.value[k]![i]!;
      if (tighter) {
        this.value[k]![i] = v;
        this.at[k]![i] = b.t;
      }
      this.counts[b.kind]++;
      this.tMin = Math.min(this.tMin, b.t);
      this.tMax = Math.max(this.tMax, b.t);
    }
    this.n++;
  }

  result(): ServerClock {
    if (this.n === 0) return { kind: 'none', requests: 0 };
    const used: OffsetBound[] = [];
    KINDS.forEach((kind, k) => {
      if (kind === 'end_checked') return;
      for (let i = 0; i < BUCKETS; i++) {
        const v = this.value[k]![i]!;
        if (!Number.isFinite(v)) continue;
        const t = this.at[k]![i]!;
        used.push(kind === 'sent' ? { t, lo: Number.NEGATIVE_INFINITY, hi: v } : { t, lo: v, hi: Number.POSITIVE_INFINITY });
      }
    });
    const [tMin, tMax] = [this.tMin, this.tMax];
    const t0 = (tMin + tMax) / 2;
    const bLimit = DRIFT_LIMIT_PPM * 1e-6;
    let slack = 0;
    let poly = linePolygon(used, t0, bLimit);
    if (poly.vertices.length === 0) {
      const least = smallestSlack(used, t0, bLimit);
      if (least > SLACK_LIMIT_NS / 2)
        return {
          kind: 'inconsistent',
          requests: this.n,
          slackNs: least,
          bounds: { ...this.counts },
          reason: `no line fits the joined requests' bounds: they cross by ${((2 * least) / 1e6).toFixed(3)} ms for any drift within ±${DRIFT_LIMIT_PPM} ppm, beyond the ${(SLACK_LIMIT_NS / 1e6).toFixed(3)} ms allowed: the server's clock stepped during the run, or its spans do not start between the request's departure and its response's headers`,
        };
      // The least slack admits a single line; a hair more gives the polygon an inside to measure.
      for (let extra = Math.max(1, least * 1e-9); poly.vertices.length === 0; extra *= 2) {
        slack = least + extra;
        poly = linePolygon(used, t0, bLimit, slack);
      }
    }
    return fitted(poly, used, tMin, tMax, slack, this.originNs, this.n, { ...this.counts });
  }
}

function fitted(
  poly: LinePolygon,
  used: readonly OffsetBound[],
  tMin: number,
  tMax: number,
  slack: number,
  origin: bigint,
  n: number,
  bounds: BoundCounts,
): ServerClock {
  const centre = centreLine(poly, tMin, tMax);
  // Where bounds cross, at the fitted drift: the lowest upper bound and the highest lower bound,
  // each carried along the line to t = 0. A lower bound above the first crosses, as does an upper
  // bound below the second; the side with fewer such bounds is the few that disagree with the rest.
  const b = centre.slope;
  let lowestUpper = Number.POSITIVE_INFINITY;
  let highestLower = Number.NEGATIVE_INFINITY;
  for (const p of used) {
    lowestUpper = Math.min(lowestUpper, p.hi - b * p.t);
    highestLower = Math.max(highestLower, p.lo - b * p.t);
  }
  let lowerCrossing = 0;
  let upperCrossing = 0;
  const drift = driftRange(poly);
  // The drift's range widens by the slack too: each end of the stretch may move by it.
  const span = tMax - tMin;
  const driftSlack = span > 0 ? (2 * slack) / span : 0;
  const tally: CrossingTally = { crossing: 0, crossingMaxNs: 0, endCrossing: 0, endCrossingMaxNs: 0 };
  const rel = (ns: bigint): number => Number(ns - origin);
  return {
    kind: 'fitted',
    model: drift.bounded ? 'line' : 'drift-unbounded',
    offsetAt: (runNs) => centre.at(rel(runNs)),
    rangeAt: (runNs) => {
      const [lo, hi] = offsetRangeAt(poly, rel(runNs));
      return [lo - slack, hi + slack];
    },
    offsetNs: centre.at((tMin + tMax) / 2),
    uncertaintyNs: centre.halfWidth + slack,
    driftPpm: drift.bounded ? ((drift.lo + drift.hi) / 2) * 1e6 : null,
    driftUncertaintyPpm: drift.bounded ? ((drift.hi - drift.lo) / 2 + driftSlack) * 1e6 : null,
    driftRangePpm: [(drift.lo - driftSlack) * 1e6, (drift.hi + driftSlack) * 1e6],
    slackNs: slack,
    bounds,
    requests: n,
    observe(s) {
      for (const x of requestBounds(s, origin)) {
        if (x.kind === 'end_checked') {
          const over = x.lo - offsetRangeAt(poly, x.t)[1];
          if (over > 0) {
            tally.endCrossing++;
            tally.endCrossingMaxNs = Math.max(tally.endCrossingMaxNs, over);
          }
          continue;
        }
        if (slack === 0) continue;
        if (x.lo - b * x.t > lowestUpper) lowerCrossing++;
        if (x.hi - b * x.t < highestLower) upperCrossing++;
      }
    },
    tally: () => ({
      ...tally,
      crossing: slack > 0 ? Math.min(lowerCrossing, upperCrossing) : 0,
      crossingMaxNs: slack > 0 ? Math.max(0, highestLower - lowestUpper) : 0,
    }),
  };
}
