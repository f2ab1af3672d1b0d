// Pure: the headroom rule. Each agent's share (load.ts) priced with that agent's self-test: the
// CPU its busiest second needs, as event-loop utilisation of its threads; the stamp error p99 its
// own error curve implies there; the memory its open streams take. A share beyond the stated
// fraction of the ceiling (utilisation 1: the loop never idle), or whose implied error is more
// than the stated share of the tightest SLO bound it serves, fails the rule; the smallest fleet
// of the same agents that passes it is what the plan needs.

import type { Plan } from '../../shared/plan.js';
import type { SelfTestFigures } from '../../shared/self-test.js';
import { errorAtElu } from '../../shared/self-test.js';
import { declaredBounds } from '../../shared/slo-bounds.js';
import type { AgentLoad } from './load.js';

/** The stated limits. */
export interface HeadroomLimits {
  /** Largest projected event-loop utilisation allowed, as a fraction of the ceiling (1). */
  maxElu: number;
  /** Largest implied stamp-error p99 allowed, as a share of the tightest TTFT/E2E SLO bound. */
  maxSloShare: number;
}

export const DEFAULT_LIMITS: HeadroomLimits = { maxElu: 0.7, maxSloShare: 0.1 };

/** One agent's projection. */
export interface AgentProjection {
  agent: number;
  agent_id: string;
  /** Projected CPU of its busiest second, CPU-seconds per second. */
  cpu_per_s: number;
  /** That CPU over its threads (--workers): the event-loop utilisation the share projects to. */
  projected_elu: number;
  /** The stamp-error p99 its error curve implies at that utilisation, ms (null without figures). */
  implied_error_p99_ms: number | null;
  /** True when the projection is past the self-test's highest measured utilisation (the error is then at least this). */
  beyond_measured: boolean;
  /** Memory its most streams open at once take, bytes. */
  stream_memory_bytes: number;
  /** Why it fails the rule (empty: it passes; null figures: unknown). */
  problems: string[];
}

/** The rule's verdict over a fleet. */
export interface HeadroomVerdict {
  /** The tightest TTFT or E2E p95 bound any class declares, ms (null: no SLO bounds). */
  tightest_slo_ms: number | null;
  agents: AgentProjection[];
  /** True when every agent with figures passes; agents without figures are listed in `unknown`. */
  ok: boolean;
  /** Agents that sent no self-test figures (not projected). */
  unknown: string[];
  /** Projected utilisation over the ceiling (1): the share cannot be offered on time at all. */
  over_ceiling: boolean;
}

/** An agent as the rule sees it. */
export interface FleetAgent {
  id: string;
  figures: SelfTestFigures | null;
  workers: number;
  /**
   * The share of a core each of its threads gets (1: a core of its own). Local agents on a
   * machine with fewer free cores than agent threads share them: each loop then takes 1/share
   * times as long, in wall time, for the same work.
   */
  coreShare?: number;
  /**
   * Agents served by one process without worker threads (a packed local layout) share its one
   * event loop: agents with the same loop number have their CPU summed onto it.
   */
  loop?: number;
}

/** The core share of each of `threads` threads on `freeCores` free cores (at least one core is counted). */
export function localCoreShare(threads: number, freeCores: number): number {
  return Math.min(1, Math.max(1, freeCores) / threads);
}

/** The tightest TTFT or E2E bound (any row of the SLO table) over the plan's classes (every agent serves every class). */
export function tightestSloMs(plan: Plan): number | null {
  const bounds = plan.classes.flatMap((c) =>
    (c.slo ? declaredBounds(c.slo) : []).filter((b) => b.row.metric !== 'tpot').map((b) => b.bound),
  );
  return bounds.length > 0 ? Math.min(...bounds) : null;
}

/** CPU-seconds per second of an agent's busiest second, at its measured costs. */
export function peakCpuPerS(load: AgentLoad, f: SelfTestFigures): number {
  let peak = 0;
  const { starts, chunks, finishes } = load.seconds;
  for (let i = 0; i < starts.length; i++)
    peak = Math.max(peak, (starts[i]! * f.cpu_us_per_start + chunks[i]! * f.cpu_us_per_chunk + finishes[i]! * f.cpu_us_per_finish) / 1e6);
  return peak;
}

/** Projects each agent's load (agent i carries loads[i]) and judges it. */
export function judge(
  loads: readonly AgentLoad[],
  fleet: readonly FleetAgent[],
  tightestMs: number | null,
  limits: HeadroomLimits,
): HeadroomVerdict {
  const agents: AgentProjection[] = [];
  const unknown: string[] = [];
  let overCeiling = false;
  const cpus = loads.map((load, i) => (fleet[i]!.figures ? peakCpuPerS(load, fleet[i]!.figures!) : 0));
  // A shared loop carries every share on it (their busiest seconds summed: an upper bound).
  const loopCpu = new Map<number, number>();
  fleet.forEach((a, i) => {
    if (a.loop !== undefined) loopCpu.set(a.loop, (loopCpu.get(a.loop) ?? 0) + cpus[i]!);
  });
  loads.forEach((load, i) => {
    const a = fleet[i]!;
    const f = a.figures;
    if (!f) {
      unknown.push(a.id);
      return;
    }
    const cpu = cpus[i]!;
    const onLoop = a.loop === undefined ? cpu : loopCpu.get(a.loop)!;
    const elu = onLoop / (Math.max(1, a.workers) * (a.coreShare ?? 1));
    const err = errorAtElu(f.error_curve, elu);
    const problems: string[] = [];
    if (elu > 1) overCeiling = true;
    if (elu > limits.maxElu) problems.push(`projected event-loop utilisation ${pct(elu)} is over ${pct(limits.maxElu)} of its ceiling`);
    if (tightestMs !== null && err.p99_ms > limits.maxSloShare * tightestMs)
      problems.push(
        `implied stamp error p99 ${err.beyond ? '≥ ' : ''}${err.p99_ms.toFixed(1)} ms is over ${pct(limits.maxSloShare)} of the tightest SLO bound (${tightestMs} ms)`,
      );
    agents.push({
      agent: i,
      agent_id: a.id,
      cpu_per_s: round3(cpu),
      projected_elu: round3(elu),
      implied_error_p99_ms: round3(err.p99_ms),
      beyond_measured: err.beyond,
      stream_memory_bytes: load.peak_streams * f.memory_bytes_per_stream,
      problems,
    });
  });
  return {
    tightest_slo_ms: tightestMs,
    agents,
    ok: agents.every((a) => a.problems.length === 0),
    unknown,
    over_ceiling: overCeiling,
  };
}

/**
 * The smallest fleet of agents like `model` (the weakest of the fleet: the one whose figures
 * project the most CPU) that passes the rule, up to `maxAgents`; null when none does — the
 * implied error at even the lightest share is over the SLO share, or more agents than maxAgents.
 * `loadsFor(n)` gives the loads of a fleet of n.
 */
export function fleetSizeNeeded(
  loadsFor: (n: number) => AgentLoad[],
  model: FleetAgent,
  tightestMs: number | null,
  limits: HeadroomLimits,
  from: number,
  maxAgents = 10_000,
  /** For a local fleet: the machine's free cores (n agents share them: more agents, less of a core each). */
  localFreeCores?: number,
): { agents: number | null; why: string } {
  const f = model.figures;
  if (!f) return { agents: null, why: 'no self-test figures to size the fleet with' };
  const floorErr = errorAtElu(f.error_curve, 0).p99_ms;
  if (tightestMs !== null && floorErr > limits.maxSloShare * tightestMs)
    return {
      agents: null,
      why: `even an idle agent's stamp error p99 (${floorErr.toFixed(1)} ms) is over ${pct(limits.maxSloShare)} of the tightest SLO bound (${tightestMs} ms): no number of these agents meets it`,
    };
  const like = (n: number): FleetAgent =>
    localFreeCores === undefined ? model : { ...model, coreShare: localCoreShare(n * Math.max(1, model.workers), localFreeCores) };
  const passes = (n: number): boolean => {
    const loads = loadsFor(n);
    return judge(
      loads,
      loads.map(() => like(n)),
      tightestMs,
      limits,
    ).ok;
  };
  // A local fleet gains nothing past its free cores: beyond them every agent just gets less of one.
  if (localFreeCores !== undefined) maxAgents = Math.min(maxAgents, Math.max(1, Math.floor(localFreeCores)));
  // Shares shrink about as 1/n: start from the projection, then step up (the split is not exactly even).
  let n = Math.max(1, Math.min(from, maxAgents));
  if (passes(n)) {
    while (n > 1 && passes(n - 1)) n--;
    return { agents: n, why: 'the smallest fleet of these agents that passes' };
  }
  const worst = Math.max(...loadsFor(n).map((l) => peakCpuPerS(l, f) / (Math.max(1, model.workers) * (like(n).coreShare ?? 1))));
  let guess = Math.min(maxAgents, Math.max(n + 1, Math.ceil((n * worst) / limits.maxElu)));
  for (let tries = 0; tries < 64 && guess <= maxAgents; tries++) {
    if (passes(guess)) {
      let lo = n;
      let hi = guess;
      while (hi - lo > 1) {
        const mid = (lo + hi) >>> 1;
        if (passes(mid)) hi = mid;
        else lo = mid;
      }
      return { agents: hi, why: 'the smallest fleet of these agents that passes' };
    }
    guess = Math.min(maxAgents + 1, Math.ceil(guess * 1.5));
  }
  return {
    agents: null,
    why:
      localFreeCores === undefined
        ? `more than ${maxAgents} agents`
        : `more CPU than the ${Math.max(1, Math.floor(localFreeCores))} free core(s) of this machine give: use agents on other machines (--listen)`,
  };
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
