// The clock's shapes that the rest of the coordinator holds (an agent's state, the validity gate's
// evidence) without reaching into the clock's own room: kept in a file that imports nothing, so
// every arrow runs from those rooms and from clock/ down to here.

/** The agent's offset from our clock as a line through its recent probes. */
export interface OffsetLine {
  /** Its slope: the agent's drift against our clock (fraction; × 1e6 for ppm). */
  slope: number;
  /** The fitted offset (agent minus our clock, ns) at our instant `nowNs`. */
  at(nowNs: bigint): number;
}

/** What one held-out probe measured. */
export interface HeldOutResidual {
  /** Seconds after the start instant (coordinator clock) of the probe's midpoint. */
  t_s: number;
  /** The agent's run timeline minus ours at T2 (ns): its raw offset less the offset it started with and the correction it had applied. */
  residual_ns: number;
  /** Half the probe's round trip, widened for a drift of up to 1% (held-out.ts residualBoundNs): the true residual at the round trip's midpoint lies within residual_ns ± bound_ns, whatever the path asymmetry. */
  bound_ns: number;
}

/** An agent's held-out residuals over the whole run, as run.json and the clock_residual check state them. */
export interface ResidualSummary {
  /** Held-out probes that measured the run timeline after the start. */
  probes: number;
  /** Of those, the ones whose bound is within the tolerance (a probe stalled by more cannot tell a good timeline from a bad one). */
  informative: number;
  p50_ns: number | null;
  p99_ns: number | null;
  max_ns: number | null;
  /** The largest |residual| − bound: the most the probes prove the timeline was off (≤ 0: nothing proven). */
  proven_max_ns: number | null;
  /** Seconds after the start of the probe that gave proven_max_ns. */
  proven_max_at_s: number | null;
  /** |residual| of the last held-out probe. */
  end_ns: number | null;
}
