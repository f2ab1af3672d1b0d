// What run.json states of each agent's clock during the run, and what the clock_residual check
// reads (pure). A steered agent's residual comes from its held-out probes over the whole run
// (held-out.ts): every one from its first request on counts, the start included; a declared
// common domain's agent's from its fitted offset against the domain's reference, each second.

import type { ClockResidualEntry } from '../../figures/validity/types.js';
import type { ProbeSample } from '../../shared/clock.js';
import { probeOffset } from '../../shared/clock.js';
import type { AgentState } from '../agent-state.js';
import { HELD_OUT_BURST, HOLD_OUT_EVERY, summarizeResiduals } from './held-out.js';

/**
 * How the offset moved over the run: a least-squares line through the lowest-delay quarter of the
 * probes (at least 4), as in the steering (a loaded machine stalls many probes).
 */
export interface DriftFit {
  samples: number;
  drift_ppm: number | null;
  /** Largest |offset − join offset| among the probes used. */
  max_deviation_ns: number | null;
}

/** Fits offset drift from the probes that entered the fit (the join offset is what the run was measured against). */
export function fitDrift(probes: readonly ProbeSample[], joinOffsetNs: number): DriftFit {
  if (probes.length < 4) return { samples: probes.length, drift_ppm: null, max_deviation_ns: null };
  const measured = probes
    .map((s) => ({ t: Number(s.t1 - probes[0]!.t1), ...probeOffset(s) }))
    .sort((a, b) => a.delayNs - b.delayNs)
    .slice(0, Math.max(4, Math.ceil(probes.length / 4)));
  const n = measured.length;
  const mt = measured.reduce((s, m) => s + m.t, 0) / n;
  const mo = measured.reduce((s, m) => s + m.offsetNs, 0) / n;
  const sxx = measured.reduce((s, m) => s + (m.t - mt) ** 2, 0);
  const sxy = measured.reduce((s, m) => s + (m.t - mt) * (m.offsetNs - mo), 0);
  return {
    samples: probes.length,
    drift_ppm: sxx > 0 ? Math.round((sxy / sxx) * 1e6 * 1000) / 1000 : null,
    max_deviation_ns: Math.max(...measured.map((m) => Math.abs(m.offsetNs - joinOffsetNs))),
  };
}

/** run.json's clock fields of one agent. */
export interface DriftFields {
  run_probes: number;
  start_offset_ns: number;
  drift_ppm: number | null;
  offset_max_deviation_ns: number | null;
  clock_slew_steps: number;
  clock_residual_probes: number | null;
  clock_residual_p50_ns: number | null;
  clock_residual_p99_ns: number | null;
  clock_residual_max_ns: number | null;
  clock_residual_proven_max_ns: number | null;
  clock_residual_end_ns: number | null;
}

/** The clock fields of one agent. */
export function driftFields(s: AgentState): DriftFields {
  const fit = fitDrift(s.runProbes, s.offset.offset_ns);
  const steps = s.slewSteps ?? [];
  const domain = s.domainSteps ?? [];
  const base = {
    run_probes: fit.samples,
    start_offset_ns: s.startOffsetNs ?? s.offset.offset_ns,
    drift_ppm: fit.drift_ppm,
    offset_max_deviation_ns: fit.max_deviation_ns,
    clock_slew_steps: steps.length,
  };
  if (steps.length === 0 && domain.length > 0) {
    const abs = domain.map((x) => Math.abs(x.error_ns));
    return {
      ...base,
      clock_residual_probes: null,
      clock_residual_p50_ns: null,
      clock_residual_p99_ns: null,
      clock_residual_max_ns: Math.round(Math.max(...abs)),
      clock_residual_proven_max_ns: null,
      clock_residual_end_ns: Math.round(abs.at(-1)!),
    };
  }
  if (s.heldOut === undefined && steps.length === 0)
    return {
      ...base,
      clock_residual_probes: null,
      clock_residual_p50_ns: null,
      clock_residual_p99_ns: null,
      clock_residual_max_ns: null,
      clock_residual_proven_max_ns: null,
      clock_residual_end_ns: null,
    };
  const r = summarizeResiduals(s.heldOut ?? [], 0);
  return {
    ...base,
    clock_residual_probes: r.probes,
    clock_residual_p50_ns: r.p50_ns,
    clock_residual_p99_ns: r.p99_ns,
    clock_residual_max_ns: r.max_ns,
    clock_residual_proven_max_ns: r.proven_max_ns,
    clock_residual_end_ns: r.end_ns,
  };
}

/** What the clock_residual check reads: every agent steered or checked against its declared domain. */
export function clockResidualEntries(states: readonly AgentState[], toleranceNs: number): ClockResidualEntry[] {
  return states
    .filter((s) => (s.slewSteps ?? []).length > 0 || (s.heldOut ?? []).length > 0 || (s.domainSteps ?? []).length > 0)
    .map((s) => {
      const steered = (s.slewSteps ?? []).length > 0 || (s.heldOut ?? []).length > 0;
      if (!steered)
        return {
          agentId: s.conn.hello.agent_id,
          residualMaxNs: driftFields(s).clock_residual_max_ns,
          uncertaintyNs: s.offset.uncertainty_ns,
          basis: 'declared-domain' as const,
        };
      const r = summarizeResiduals(s.heldOut ?? [], toleranceNs);
      return {
        agentId: s.conn.hello.agent_id,
        residualMaxNs: r.max_ns,
        uncertaintyNs: s.offset.uncertainty_ns,
        basis: 'steered' as const,
        heldOut: r,
      };
    });
}

/** run.json clock.offset_model. */
export const OFFSET_MODEL =
  "a steered agent (measured offsets, not the coordinator's host): its offset at the start instant from a line through probes taken while it prepared, then its run timeline slewed during the run at the drift its in-run probes fit (the correction on each record); any other agent: a constant offset measured at join (none in a declared common clock domain)";

/** run.json field_definitions of these fields. */
export const DRIFT_FIELD_DEFINITIONS: Record<string, string> = {
  'agents[].run_probes':
    "clock probes that entered the agent's drift fit: for a steered agent those taken while it prepared (at least 16, 4 a second) and its in-run ones not held out; for any other agent its in-run ones (one a second, fewer in fleets beyond 1,000 agents)",
  'agents[].start_offset_ns':
    'the offset (agent clock minus coordinator clock) the agent was started and aligned with: for a steered agent the value at the start instant of a line fitted through its pre-start probes (so its drift since the join probes is not an error at its first request); else offset_ns',
  'agents[].drift_ppm':
    "the slope of the agent's raw clock against the coordinator's over the run (ppm; positive: it runs fast), a least-squares line through the lowest-delay quarter of its run_probes; null with fewer than 4; stated for every agent, steered or not",
  'agents[].offset_max_deviation_ns':
    "the largest distance between the agent's raw offset in those probes and its join offset: how far its raw clock moved from the offset measured at join (its slewed timeline's distance is clock_residual_max_ns)",
  'agents[].clock_slew_steps':
    "how many times the coordinator told the agent the rate to slew its run timeline at (at its first request, then at each in-run probe that was not held out), so that a drifting clock still sends on the global schedule and stamps on the coordinator's timeline",
  'agents[].clock_residual_probes': `a steered agent: its held-out probes answered from its first request to its end (every ${HOLD_OUT_EVERY}th in-run probe, sent as a burst of ${HELD_OUT_BURST} with the shortest round trip kept, never in the drift fit and taking no steering step), each measuring its run timeline against the coordinator's: its raw offset less start_offset_ns and less the correction its reply said it had applied at that instant; null for an agent not steered`,
  'agents[].clock_residual_p50_ns':
    'a steered agent: the median over its held-out probes of |run timeline − coordinator timeline| (each within ± half that probe’s round trip of the truth, widened by 1% for a clock drifting up to 1% over it); null otherwise',
  'agents[].clock_residual_p99_ns': 'the same p99 (nearest rank)',
  'agents[].clock_residual_max_ns':
    "a steered agent: the largest |run timeline − coordinator timeline| its held-out probes measured over the whole run, the start included; an agent of a declared common clock domain (never steered; checked when the domain is not the coordinator's host and two or more agents have fits): the largest distance, each second, between its fitted offset and the median agent's, the domain's reference at join too; null otherwise",
  'agents[].clock_residual_proven_max_ns':
    'a steered agent: the largest |residual| − half the round trip over its held-out probes, the most any of them proves its run timeline was off (half the round trip widened by 1% for a drift of up to 1% over it) (≤ 0: none proves any); the clock_residual check fails when it exceeds --clock-tolerance-ms; null otherwise',
  'agents[].clock_residual_end_ns':
    "the same distance at the agent's last held-out probe (steered) or last domain check (null without one)",
};
