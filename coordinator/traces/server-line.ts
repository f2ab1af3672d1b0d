// Pure: the server's clock placed in the run's clock domain as a line (offset and drift) through
// every joined request's bound. Each request bounds θ = server clock − run clock at its instant
// (Cristian): the span started after the request left and before the first byte came back, and
// ended before the last byte came back —
//   max(start − headers, end − done) ≤ θ ≤ start − sent.
// The lines through every bound are those the clients' clocks use (clock/feasible-line.ts). Memory
// is constant: the run is cut into a fixed number of buckets and each keeps only its tightest lower
// and upper bound; the bounds dropped are weaker ones, so the range found still holds the truth.
import { lineThroughBounds, type OffsetBound } from '../clock/feasible-line.js';

/** One joined request: the client's stamps in the run's clock domain, the span's on the server's clock (Unix ns). */
export interface JoinedStamps {
  sentNs: bigint;
  /** When the response's first byte (its headers) reached the client. */
  headersNs: bigint;
  /** When the last byte reached the client, or null when unknown. */
  doneNs: bigint | null;
  serverStartNs: bigint;
  serverEndNs: bigint;
}

/** The server's clock in the run's clock domain, as far as the joined requests bound it. */
export type ServerClock =
  | {
      kind: 'fitted';
      /** 'line': offset and drift from the bounds; 'constant': too few instants to bound a drift, taken as none. */
      model: 'line' | 'constant';
      /** θ (ns, server − run) at a run instant. */
      offsetAt(runNs: bigint): number;
      /** θ at the middle of the joined requests. */
      offsetNs: number;
      /** The largest distance, over the run, from the fitted θ to any θ every bound allows. */
      uncertaintyNs: number;
      driftPpm: number;
      driftUncertaintyPpm: number;
      requests: number;
    }
  | { kind: 'inconsistent'; requests: number; reason: string }
  | { kind: 'none'; requests: 0 };

const BUCKETS = 256;
const SEARCH_STEPS = 80;

/** Folds joined requests into bucketed bounds; `result()` fits the line. */
export class ServerClockFit {
  private readonly lo = new Float64Array(BUCKETS).fill(Number.NEGATIVE_INFINITY);
  private readonly loT = new Float64Array(BUCKETS);
  private readonly hi = new Float64Array(BUCKETS).fill(Number.POSITIVE_INFINITY);
  private readonly hiT = new Float64Array(BUCKETS);
  private n = 0;
  private readonly bucketNs: number;

  /** `originNs`: the run's start; `lengthNs`: how long its requests span (the buckets' extent). */
  constructor(
    private readonly originNs: bigint,
    lengthNs: number,
  ) {
    this.bucketNs = Math.max(1, lengthNs / BUCKETS);
  }

  add(s: JoinedStamps): void {
    const hi = Number(s.serverStartNs - s.sentNs);
    let lo = Number(s.serverStartNs - s.headersNs);
    if (s.doneNs !== null) lo = Math.max(lo, Number(s.serverEndNs - s.doneNs));
    if (!(lo <= hi)) return; // the client's own stamps out of order: bounds nothing
    const t = Number(s.sentNs - this.originNs);
    const b = Math.min(BUCKETS - 1, Math.max(0, Math.floor(t / this.bucketNs)));
    if (lo > this.lo[b]!) {
      this.lo[b] = lo;
      this.loT[b] = t;
    }
    if (hi < this.hi[b]!) {
      this.hi[b] = hi;
      this.hiT[b] = t;
    }
    this.n++;
  }

  result(): ServerClock {
    if (this.n === 0) return { kind: 'none', requests: 0 };
    const bounds: OffsetBound[] = [];
    for (let b = 0; b < BUCKETS; b++) {
      if (this.lo[b]! > Number.NEGATIVE_INFINITY) bounds.push({ t: this.loT[b]!, lo: this.lo[b]!, hi: Number.POSITIVE_INFINITY });
      if (this.hi[b]! < Number.POSITIVE_INFINITY) bounds.push({ t: this.hiT[b]!, lo: Number.NEGATIVE_INFINITY, hi: this.hi[b]! });
    }
    const ts = bounds.map((p) => p.t);
    const [tMin, tMax] = [Math.min(...ts), Math.max(...ts)];
    const line = lineThroughBounds(bounds);
    const maxLo = Math.max(...bounds.map((p) => p.lo));
    const minHi = Math.min(...bounds.map((p) => p.hi));
    if (!line && maxLo > minHi)
      return {
        kind: 'inconsistent',
        requests: this.n,
        reason: `no line fits every joined request (the bounds cross by ${((maxLo - minHi) / 1e6).toFixed(3)} ms without drift, and no drift reconciles them): the server's clock stepped during the run, or its spans do not start when the request arrives`,
      };
    // Without a line (every bound at one instant, or the drift unbounded on one side) the offset
    // is taken as constant, and its range is what the bounds allow without drift.
    const slopes: [number, number] = line ? [line.slopeLo, line.slopeHi] : [0, 0];
    const slope = line ? line.slope : 0;
    const a = line ? (line.aLo + line.aHi) / 2 : (maxLo + minHi) / 2;
    let uncertainty = 0;
    for (let k = 0; k <= 64; k++) {
      const t = tMin + ((tMax - tMin) * k) / 64;
      const [low, high] = offsetRange(bounds, slopes, t);
      const fitted = a + slope * t;
      uncertainty = Math.max(uncertainty, fitted - low, high - fitted);
    }
    const origin = this.originNs;
    return {
      kind: 'fitted',
      model: line ? 'line' : 'constant',
      offsetAt: (runNs) => a + slope * Number(runNs - origin),
      offsetNs: a + (slope * (tMin + tMax)) / 2,
      uncertaintyNs: uncertainty,
      driftPpm: slope * 1e6,
      driftUncertaintyPpm: ((slopes[1] - slopes[0]) / 2) * 1e6,
      requests: this.n,
    };
  }
}

/**
 * The lowest and highest θ at instant t over every line through the bounds with a slope in
 * `slopes`: the highest is max over s of min over bounds of (hi + s·(t − t_i)), concave in s, so a
 * ternary search finds it (and the lowest likewise, convex).
 */
function offsetRange(bounds: readonly OffsetBound[], [sLo, sHi]: [number, number], t: number): [number, number] {
  const upper = (s: number): number => {
    let m = Number.POSITIVE_INFINITY;
    for (const p of bounds) if (p.hi < Number.POSITIVE_INFINITY) m = Math.min(m, p.hi + s * (t - p.t));
    return m;
  };
  const lower = (s: number): number => {
    let m = Number.NEGATIVE_INFINITY;
    for (const p of bounds) if (p.lo > Number.NEGATIVE_INFINITY) m = Math.max(m, p.lo + s * (t - p.t));
    return m;
  };
  return [-extreme((s) => -lower(s), sLo, sHi), extreme(upper, sLo, sHi)];
}

// The maximum of a concave function on [lo, hi].
function extreme(f: (s: number) => number, lo: number, hi: number): number {
  let [a, b] = [lo, hi];
  for (let i = 0; i < SEARCH_STEPS && b > a; i++) {
    const m1 = a + (b - a) / 3;
    const m2 = b - (b - a) / 3;
    if (f(m1) < f(m2)) a = m1;
    else b = m2;
  }
  return Math.max(f(a), f(b), f((a + b) / 2));
}
