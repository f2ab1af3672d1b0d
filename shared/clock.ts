// Clocks: one monotonic source (hrtime) anchored once to the wall clock, and the NTP-style
// four-timestamp estimate the coordinator uses to measure each agent's offset.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';

/** A clock that gives ns since the Unix epoch in its own domain, derived from hrtime deltas. */
export interface Clock {
  nowNs(): bigint;
  /** Half the width of the bracket that placed the anchor: the bound on this clock's error vs the wall clock it read. */
  readonly anchorUncertaintyNs: number;
  /** The anchor itself, so worker threads (same process, same hrtime) can share this exact clock. */
  readonly anchor: ClockAnchor;
}

/** A wall-clock reading (ns, offset applied) and the hrtime read it corresponds to. */
export interface ClockAnchor {
  wallNs: bigint;
  hr: bigint;
  uncertaintyNs: number;
}

/** The clock an anchor defines (hrtime is process-wide, so every thread reads the same clock). */
export function clockFromAnchor(anchor: ClockAnchor): Clock {
  return {
    nowNs: () => anchor.wallNs + (process.hrtime.bigint() - anchor.hr),
    anchorUncertaintyNs: anchor.uncertaintyNs,
    anchor,
  };
}

/**
 * Anchors hrtime to the wall clock once. Date.now() only has ms resolution, so the anchor is
 * put at a millisecond edge. The edge lies after the hrtime read taken *before* the last call
 * that still returned the old ms (that call read the wall clock somewhere after it) and before
 * the hrtime read taken after the first call that returned the new one. Of up to 8 edges the
 * tightest bracket wins, which keeps a preemption (likely when many agents start on few cores)
 * from costing a millisecond; its half-width is reported, so an anchor hit by a stall is visible
 * rather than silently wrong. `offsetNs` shifts the wall clock on purpose (tests use it to prove
 * that offsets are measured).
 */
export function anchoredClock(offsetNs = 0n): Clock {
  let best: { hr: bigint; ms: number; width: bigint } | undefined;
  for (let edge = 0; edge < 8 && (best === undefined || best.width > 20_000n); edge++) {
    let prevBefore = process.hrtime.bigint();
    const startMs = Date.now();
    let before = prevBefore;
    let ms = startMs;
    let after = prevBefore;
    while (ms === startMs) {
      prevBefore = before;
      before = process.hrtime.bigint();
      ms = Date.now();
      after = process.hrtime.bigint();
    }
    // The old-ms call ran between prevBefore and before; the new-ms call between before and after.
    const width = after - prevBefore;
    if (best === undefined || width < best.width) best = { hr: prevBefore + width / 2n, ms, width };
  }
  return clockFromAnchor({ wallNs: BigInt(best!.ms) * 1_000_000n + offsetNs, hr: best!.hr, uncertaintyNs: Number(best!.width / 2n) });
}

/**
 * How to stamp the agent's hot path without a BigInt per read: performance.now() reads the same
 * monotonic clock as hrtime (uv_hrtime, in ms with ns resolution), so hrtime ns = performance.now()
 * × 1e6 + `offsetNs`. The offset is fixed once by the tightest of `tries` brackets; `boundNs`
 * (half its width, typically < 100 ns) bounds the constant error it adds to every reading
 * (durations between readings are exact to the ns).
 */
export function perfOffsetToHrtime(tries = 32): { offsetNs: number; boundNs: number } {
  let best = { width: Number.POSITIVE_INFINITY, offsetNs: 0 };
  for (let i = 0; i < tries; i++) {
    const before = process.hrtime.bigint();
    const perfMs = performance.now();
    const after = process.hrtime.bigint();
    const width = Number(after - before);
    // hrtime ns since boot are exact in a double for 104 days of uptime (2^53 ns).
    if (width < best.width) best = { width, offsetNs: Number(before + (after - before) / 2n) - perfMs * 1e6 };
  }
  return { offsetNs: best.offsetNs, boundNs: Math.ceil(best.width / 2) };
}

/** The default clock domain: this machine since its last boot (only valid on one host). */
export function hostClockDomain(): string {
  let bootId = 'unknown-boot';
  try {
    bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    // Not Linux: the hostname alone still separates machines.
  }
  return `host:${hostname()}:${bootId}`;
}

/** One probe: T1 sent (coordinator), T2 received (agent), T3 replied (agent), T4 back (coordinator). */
export interface ProbeSample {
  t1: bigint;
  t2: bigint;
  t3: bigint;
  t4: bigint;
  /** The agent's run-timeline correction at T2 (ns), when a run was armed (probe_reply clock_correction_ns). */
  correctionNs?: number;
}

/** A measured clock relation: agent clock − coordinator clock, with its error bound. */
export interface OffsetEstimate {
  offset_ns: number;
  /** Half the round trip of the probes used: the worst case for asymmetric paths. */
  uncertainty_ns: number;
  rtt_ns: number;
  probes: number;
  used: number;
}

/** θ and δ of one probe (distributed.md): θ = ((T2−T1)+(T3−T4))/2, δ = (T4−T1)−(T3−T2). */
export function probeOffset(s: ProbeSample): { offsetNs: number; delayNs: number } {
  return {
    offsetNs: Number((s.t2 - s.t1 + (s.t3 - s.t4)) / 2n),
    delayNs: Number(s.t4 - s.t1 - (s.t3 - s.t2)),
  };
}

/** Fits the offset from the `keep` lowest-delay probes (median θ, uncertainty = max δ/2 of those). */
export function fitOffset(samples: readonly ProbeSample[], keep = 4): OffsetEstimate {
  const measured = samples.map(probeOffset).sort((a, b) => a.delayNs - b.delayNs);
  const best = measured.slice(0, Math.max(1, Math.min(keep, measured.length)));
  const offsets = best.map((m) => m.offsetNs).sort((a, b) => a - b);
  const median = offsets[Math.floor((offsets.length - 1) / 2)]!;
  return {
    offset_ns: median,
    uncertainty_ns: Math.ceil(Math.max(...best.map((m) => m.delayNs)) / 2),
    rtt_ns: best[0]!.delayNs,
    probes: samples.length,
    used: best.length,
  };
}
