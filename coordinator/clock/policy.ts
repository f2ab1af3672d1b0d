// Pure: which timeline a run may claim. A declared common clock domain is trusted only after the
// probes agree with it; otherwise agent times are mapped into the coordinator's clock with the
// measured offsets, and the artifacts say so.

import type { OffsetLine } from '../../figures/clock-types.js';
import type { OffsetEstimate } from '../../shared/clock.js';

/** What the user asked for when a declared domain turns out to be false. */
export type OnClockMismatch = 'fail' | 'align';

/** One agent as the policy sees it. */
export interface ClockView {
  agentId: string;
  domain: string;
  offset: OffsetEstimate;
}

/** The decision for a run. */
export interface ClockDecision {
  alignment: 'explicit-common-clock-domain' | 'measured-offsets';
  /** The run's clock domain id. */
  domainId: string;
  /** The common domain's offset from the coordinator (added to coordinator instants sent to agents). */
  domainOffsetNs: number;
  /** Set when the run must not start (a false common domain under `fail`). */
  refusal: string | null;
  /** Set when alignment fell back to measured offsets on a mismatch (goes into status_reason). */
  note: string | null;
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
}

/**
 * One common declared domain is verified: every agent must sit within `toleranceNs` of the
 * domain's reference, beyond its own measurement uncertainty. The reference is the coordinator
 * when it is in the same domain, else the median agent (the coordinator may be elsewhere).
 */
export function decideAlignment(
  agents: readonly ClockView[],
  coordinatorDomain: string,
  toleranceNs: number,
  onMismatch: OnClockMismatch,
): ClockDecision {
  const domains = new Set(agents.map((a) => a.domain));
  const measured = (note: string | null): ClockDecision => ({
    alignment: 'measured-offsets',
    domainId: `coordinator:${coordinatorDomain}`,
    domainOffsetNs: 0,
    refusal: null,
    note,
  });
  if (domains.size !== 1) return measured(null);
  const domain = agents[0]!.domain;
  const reference = domain === coordinatorDomain ? 0 : median(agents.map((a) => a.offset.offset_ns));
  const off = agents.filter((a) => Math.abs(a.offset.offset_ns - reference) - a.offset.uncertainty_ns > toleranceNs);
  if (off.length === 0)
    return { alignment: 'explicit-common-clock-domain', domainId: domain, domainOffsetNs: reference, refusal: null, note: null };
  const detail = off
    .map(
      (a) =>
        `${a.agentId} is ${((a.offset.offset_ns - reference) / 1e6).toFixed(3)} ms (± ${(a.offset.uncertainty_ns / 1e6).toFixed(3)} ms) off`,
    )
    .join(', ');
  const what = `the agents declare clock domain ${domain}, but ${detail}, beyond the ${(toleranceNs / 1e6).toFixed(3)} ms tolerance`;
  if (onMismatch === 'align') return measured(`${what}; aligned with measured offsets instead (--on-clock-mismatch=align)`);
  return { ...measured(null), refusal: `${what}; fix the clock sync or pass --on-clock-mismatch=align` };
}

/**
 * During a run, how far one agent of a declared common clock domain sits from the domain's
 * reference now, by the lines fitted to every agent's in-run probes (clock/slew.ts): the median
 * agent, the same reference as at join for a domain the coordinator is not in. Such agents are
 * not steered (their sync is trusted to be finer than our probes), so this is the check that the
 * declaration still holds. Null without a fit for the agent, or when fewer than two agents have
 * one (a lone agent's timeline is the domain's: there is nothing to hold it against). The
 * coordinator's own host domain is never checked: its agents read the coordinator's clock.
 */
export function domainResidualNs(lines: readonly (OffsetLine | null)[], index: number, nowNs: bigint): number | null {
  const self = lines[index];
  const fitted = lines.filter((l): l is OffsetLine => l !== null);
  if (!self || fitted.length < 2) return null;
  return self.at(nowNs) - median(fitted.map((l) => l.at(nowNs)));
}
