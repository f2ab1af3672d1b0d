// Keeping drifting agents on the coordinator's timeline during a run (the I/O side; the maths is
// in clock/slew.ts, pre-start.ts and held-out.ts). Before the start, steered agents are probed
// while they prepare so each starts on its fitted offset; during the run every in-run probe
// either refits the drift and steps the agent's slew rate, or — one in HOLD_OUT_EVERY — is held
// out and measures the run timeline the records are stamped on. Agents of a declared common clock
// domain are never steered; their declaration is checked each second instead.

import type { Clock, ProbeSample } from '../../shared/clock.js';
import { hostClockDomain, probeOffset } from '../../shared/clock.js';
import type { AgentState } from '../agent-state.js';
import { probeLanes } from '../probe.js';
import type { AgentConn } from '../server.js';
import { HELD_OUT_BURST, heldOutResidual, isHeldOut } from './held-out.js';
import type { ClockDecision } from './policy.js';
import { domainResidualNs } from './policy.js';
import { driftKnown, PRE_START_INTERVAL_MS, PRE_START_MAX_WAIT_MS, startOffsetNs } from './pre-start.js';
import { fitOffsetLine, slewStep } from './slew.js';

/** Sequence numbers of pre-start probes (the join's are 0–31, the in-run ones from 1,000,000). */
const PRE_START_SEQ = 100_000;

/**
 * Whether an agent's run timeline is steered: every agent of a measured-offsets run except those
 * of our own host and boot, which read our clock through our anchor (their offset is zero by
 * construction; steering would only feed them the probes' noise). An explicit common clock
 * domain's agents follow the domain's sync (chrony, PTP), finer than our probes can measure;
 * steering them onto ours would also carry our own drift into a domain we may not be in.
 */
export function isSteered(decision: ClockDecision, agentDomain: string): boolean {
  return decision.alignment === 'measured-offsets' && agentDomain !== hostClockDomain();
}

/** One run's clock steering. */
export class ClockSteering {
  /** Pre-start probes that got no answer in time (in-run ones are counted by the run). */
  probeFailures = 0;
  private seq = 0;
  /** In-run probes sent per agent index (which of them are held out). */
  private readonly sent = new Map<number, number>();

  constructor(
    private readonly clock: Clock,
    private readonly decision: ClockDecision,
    /** The start instant on our clock (0n until chosen). */
    private readonly startNs: () => bigint,
    /** Seconds since the start instant (for the steps' record). */
    private readonly elapsedS: () => number,
  ) {}

  /** Whether this agent is steered in this run. */
  steers(a: AgentConn): boolean {
    return isSteered(this.decision, a.hello.clock_domain_id);
  }

  /**
   * Probes the steered agents every PRE_START_INTERVAL_MS (their probes one after another, a few
   * agents at a time as at join) until `preparing` settles and each one's drift is known
   * (pre-start.ts driftKnown), or PRE_START_MAX_WAIT_MS after it settled; stops at once if it
   * rejects. Returns each agent's
   * probes by index (none for agents not steered).
   */
  async probeBeforeStart(agents: readonly AgentState[], preparing: Promise<unknown>): Promise<ProbeSample[][]> {
    const out: ProbeSample[][] = agents.map(() => []);
    const targets = agents.filter((a) => this.steers(a.conn));
    if (targets.length === 0) return out;
    let readyAt: number | null = null;
    let failed = false;
    preparing.then(
      () => {
        readyAt = Date.now();
      },
      () => {
        failed = true;
      },
    );
    const lanes = probeLanes(targets.length);
    for (;;) {
      const began = Date.now();
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < targets.length && !failed) {
          const a = targets[next++]!;
          if (a.conn.closed) continue;
          await a.channel.probe(this.clock, PRE_START_SEQ + this.seq++).then(
            (p) => void out[a.index]!.push(p),
            () => void this.probeFailures++,
          );
        }
      };
      await Promise.all(Array.from({ length: lanes }, lane));
      const enough = targets.every((a) => a.conn.closed || driftKnown(out[a.index]!));
      if (failed || (readyAt !== null && (enough || Date.now() - readyAt > PRE_START_MAX_WAIT_MS))) return out;
      await new Promise((r) => setTimeout(r, Math.max(0, PRE_START_INTERVAL_MS - (Date.now() - began))));
    }
  }

  /** Sets each agent's start offset for start instant `startNs`: its pre-start line's value there when steered, else its join offset. */
  placeStart(states: readonly AgentState[], startNs: bigint): void {
    for (const s of states)
      s.startOffsetNs = this.steers(s.conn) ? startOffsetNs(s.runProbes, s.offset.offset_ns, startNs) : s.offset.offset_ns;
  }

  /** The agent began sending: its first step at once, from the pre-start fit (not a second later, at its next probe). */
  started(s: AgentState, states: readonly AgentState[]): void {
    this.step(s, states, null);
  }

  /**
   * Sends the agent's next in-run probe (the run numbers it with `nextSeq`). A held-out one (a
   * steered agent's every HOLD_OUT_EVERY-th) is a burst of HELD_OUT_BURST probes one after
   * another, the one with the shortest round trip kept, as at join: a loaded machine stalls most
   * single probes past any tolerance, and a stalled probe can judge nothing. It measures a residual
   * and steers nothing; any other probe enters the fit and steps the agent. Rejects when no probe
   * was answered.
   */
  async probe(s: AgentState, nextSeq: () => number, states: readonly AgentState[]): Promise<void> {
    const k = this.sent.get(s.index) ?? 0;
    this.sent.set(s.index, k + 1);
    if (!(this.steers(s.conn) && isHeldOut(k))) {
      const p = await s.channel.probe(this.clock, nextSeq());
      s.runProbes.push(p);
      this.step(s, states, p);
      return;
    }
    let best: ProbeSample | null = null;
    for (let i = 0; i < HELD_OUT_BURST; i++) {
      const p = await s.channel.probe(this.clock, nextSeq()).catch(() => null);
      if (p && (best === null || probeOffset(p).delayNs < probeOffset(best).delayNs)) best = p;
    }
    if (best === null) throw new Error(`agent ${s.conn.hello.agent_id} answered none of a held-out probe burst`);
    const r = heldOutResidual(best, s.startOffsetNs ?? s.offset.offset_ns, this.startNs());
    if (r && s.firstSendErrorNs !== null) {
      s.heldOut ??= [];
      s.heldOut.push(r);
    }
  }

  /**
   * Refits the agent's offset line and, once it is sending: steers it (the fitted drift plus the
   * error left, measured at `p`'s instant with the correction its reply carried), or, in an
   * explicit common domain, checks the declaration (checkDomain).
   */
  private step(s: AgentState, states: readonly AgentState[], p: ProbeSample | null): void {
    s.offsetLine = fitOffsetLine(s.runProbes);
    if (s.firstSendErrorNs === null || s.channel.done) return;
    if (this.decision.alignment === 'explicit-common-clock-domain') {
      this.checkDomain(s, states);
      return;
    }
    if (!this.steers(s.conn)) return;
    const at = p ? p.t1 + (p.t4 - p.t1) / 2n : this.clock.nowNs();
    const applied = p?.correctionNs ?? s.clockCorrectionNs ?? 0;
    const step = slewStep(s.runProbes, s.startOffsetNs ?? s.offset.offset_ns, at, applied);
    if (!step) return;
    s.conn.send({ type: 'slew', rate_ppm: step.ratePpm });
    s.slewSteps.push({ t_s: this.elapsedS(), drift_ppm: step.driftPpm, error_ns: step.errorNs });
  }

  /**
   * An agent of a declared common clock domain: how far it sits from the domain's reference now
   * (clock/policy.ts), for the clock_residual check, so a declaration that stops holding during the
   * run is caught rather than trusted. The coordinator's own host domain reads one clock.
   */
  private checkDomain(s: AgentState, states: readonly AgentState[]): void {
    if (this.decision.domainId === hostClockDomain() || !s.offsetLine) return;
    const residual = domainResidualNs(
      states.map((x) => (x.lost ? null : x.offsetLine)),
      s.index,
      this.clock.nowNs(),
    );
    if (residual !== null) s.domainSteps.push({ t_s: this.elapsedS(), drift_ppm: s.offsetLine.slope * 1e6, error_ns: residual });
  }
}
