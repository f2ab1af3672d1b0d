// Pure: whether the client, not the server, shaped a run's figures (run.json `client_health`).
//
// Per-request timing evidence is judged as a share with its own confidence, never by one order
// statistic: the p99 of a stage's ~30 requests is their maximum, so one event-loop stall anywhere
// would decide it. A class (or an agent) is client-limited when the share of its requests whose
// first-token stamp uncertainty — or, per agent, whose schedule lag — exceeds the limit is above
// ALLOWED_SHARE with CONFIDENCE (the exact one-sided Clopper–Pearson lower bound, share-bound.ts).
// Figures the agent samples over time rather than per request (event-loop delay p99 over ~100
// timer ticks a second, event-loop utilisation) keep their limits. Every request over a limit is
// itemised by agent and second, so a verdict names when it happened and what was seen.

import type { AgentHealth, AgentStall } from '../shared/protocol.js';
import { shareBounds } from '../shared/share-bound.js';
import type { LagCount, TimingEvent } from './timing-uncertainty.js';

/** A request sent later than this after its intended time was not sent on schedule. */
export const CLIENT_LAG_LIMIT_MS = 50;
/** An agent whose event-loop delay p99 exceeds this was too busy to time requests well. */
export const CLIENT_EVENT_LOOP_P99_LIMIT_MS = 50;
/** An agent whose event loop was busy more than this share of the run had no headroom left. */
export const CLIENT_ELU_LIMIT = 0.95;
/** A first-token stamp may be late by its timing uncertainty; it may not exceed this share of the class's TTFT p50 … */
export const CLIENT_TTFT_UNCERTAINTY_SHARE = 0.1;
/**
 * … nor this floor (ms): the same bound as the event-loop delay's. On a shared 2-core machine a
 * quiet agent's uncertainty p99 already reaches 5–15 ms (measured), so a lower floor would call
 * most short runs against a fast simulator client-limited.
 */
export const CLIENT_TTFT_UNCERTAINTY_FLOOR_MS = CLIENT_EVENT_LOOP_P99_LIMIT_MS;
/**
 * The share of requests that may be over a limit. 1%: then the reported p95 of a latency is at
 * most the p96 of the true one plus the limit (no more than 1% of requests can be pushed past it
 * by more), and a run where most requests are timed well is not discarded for a few.
 */
export const ALLOWED_SHARE = 0.01;
/** The confidence with which the share must be shown above ALLOWED_SHARE before a run is called client-limited. */
export const CONFIDENCE = 0.95;
/** Stalls listed in run.json: the worst ones (by the most a request was held). */
export const STALLS_LISTED = 20;

/** One class's TTFT timing evidence. */
export interface ClassTiming {
  name: string;
  ttft_uncertainty_p99_ms: number | null;
  ttft_p50_ms: number | null;
  /** Successful requests that carried the uncertainty, and those above the class limit (ttftUncertaintyLimitMs). */
  measured: number;
  over: number;
}

/** One agent's evidence: its own health report, its schedule-lag count and its itemised requests. */
export interface AgentTiming {
  id: string;
  health: AgentHealth | null;
  lag?: LagCount | null;
  /** Its successful requests that carried the uncertainty. */
  uncertaintyMeasured?: number;
  events?: readonly TimingEvent[];
}

/** k of n over a limit, with the exact one-sided bounds of the share behind it. */
export interface ShareFigure {
  requests: number;
  over_limit: number;
  share: number | null;
  share_lower: number;
  share_upper: number;
}

/** One second of one agent in which requests went over a limit. */
export interface Stall {
  agent_id: string;
  /** Second of the run (from the shared start instant) in which the requests were sent. */
  second: number;
  requests: number;
  max_ttft_uncertainty_ms: number | null;
  max_schedule_lag_ms: number | null;
  cause: string;
}

/** run.json `client_health`. */
export interface ClientHealth {
  client_limited: boolean;
  reasons: string[];
  /** Agents whose own evidence made the run client-limited. */
  limited_agents: string[];
  schedule_lag_p99_ms: number | null;
  event_loop_delay_p99_ms: number | null;
  /** The largest class TTFT timing-uncertainty p99 (reported; the verdict reads the shares). */
  ttft_uncertainty_p99_ms: number | null;
  /** The lowest coverage of that estimate any agent measured in its self-test (null: none measured). */
  ttft_uncertainty_coverage?: number | null;
  allowed_share: number;
  confidence: number;
  classes: ({ name: string; limit_ms: number; limited: boolean } & ShareFigure)[];
  agents: { agent_id: string; limited: boolean; schedule_lag: ShareFigure | null; ttft_uncertainty: ShareFigure | null }[];
  stalls: Stall[];
  limits: Record<string, number>;
  definition: string;
}

/** The largest TTFT timing uncertainty a class with this TTFT p50 tolerates on a request (ms). */
export function ttftUncertaintyLimitMs(ttftP50Ms: number | null): number {
  return Math.max(CLIENT_TTFT_UNCERTAINTY_FLOOR_MS, Math.round(CLIENT_TTFT_UNCERTAINTY_SHARE * (ttftP50Ms ?? 0) * 1e3) / 1e3);
}

/** Whether the client limited the run, with every reason and the evidence. */
export function clientHealth(
  agents: readonly AgentTiming[],
  classes: readonly ClassTiming[] = [],
  /** The lowest share of stamp errors the uncertainty covered in the agents' self-tests, when measured. */
  uncertaintyCoverage: number | null = null,
): ClientHealth {
  const reasons: string[] = [];
  const limitedAgents: string[] = [];
  const limitOf = new Map(classes.map((c) => [c.name, ttftUncertaintyLimitMs(c.ttft_p50_ms)]));
  let lag: number | null = null;
  let eld: number | null = null;
  const agentRows: ClientHealth['agents'] = [];
  const stalls: Stall[] = [];
  for (const a of agents) {
    const h = a.health;
    const why: string[] = [];
    if (h) {
      if (h.schedule_lag_p99_ms !== null) lag = Math.max(lag ?? 0, h.schedule_lag_p99_ms);
      eld = Math.max(eld ?? 0, h.event_loop_delay_p99_ms);
      if (h.event_loop_delay_p99_ms > CLIENT_EVENT_LOOP_P99_LIMIT_MS)
        why.push(`event-loop delay p99 ${h.event_loop_delay_p99_ms} ms > ${CLIENT_EVENT_LOOP_P99_LIMIT_MS} ms`);
      if ((h.elu ?? 0) > CLIENT_ELU_LIMIT) why.push(`event-loop utilisation ${(h.elu! * 100).toFixed(1)}% > ${CLIENT_ELU_LIMIT * 100}%`);
    }
    const events = a.events ?? [];
    const lagShare = a.lag ? figure(a.lag.over, a.lag.measured) : null;
    if (lagShare && limited(lagShare))
      why.push(`${shareText(lagShare)} of its requests were sent more than ${CLIENT_LAG_LIMIT_MS} ms after their intended time`);
    const uOver = events.filter((e) => e.uncertaintyNs !== null && e.uncertaintyNs / 1e6 > (limitOf.get(e.cls) ?? Infinity)).length;
    const uShare = (a.uncertaintyMeasured ?? 0) > 0 ? figure(Math.min(uOver, a.uncertaintyMeasured!), a.uncertaintyMeasured!) : null;
    if (uShare && limited(uShare)) why.push(`${shareText(uShare)} of its first-token stamps were uncertain by more than their class limit`);
    const own = stallsOf(a.id, events, limitOf, h?.stalls ?? []);
    stalls.push(...own);
    if (why.length > 0) {
      limitedAgents.push(a.id);
      reasons.push(`${a.id}: ${why.join(', ')}${worstText(own)}`);
    }
    agentRows.push({ agent_id: a.id, limited: why.length > 0, schedule_lag: lagShare, ttft_uncertainty: uShare });
  }
  stalls.sort((x, y) => held(y) - held(x) || x.second - y.second);
  let uncertainty: number | null = null;
  const classRows: ClientHealth['classes'] = [];
  for (const c of classes) {
    if (c.ttft_uncertainty_p99_ms !== null) uncertainty = Math.max(uncertainty ?? 0, c.ttft_uncertainty_p99_ms);
    const limitMs = limitOf.get(c.name)!;
    const f = figure(c.over, c.measured);
    const isLimited = limited(f);
    classRows.push({ name: c.name, limit_ms: limitMs, limited: isLimited, ...f });
    if (isLimited)
      reasons.push(
        `class ${c.name}: ${shareText(f)} of its first-token stamps were uncertain by more than ${limitMs} ms (the larger of ${CLIENT_TTFT_UNCERTAINTY_FLOOR_MS} ms and ${CLIENT_TTFT_UNCERTAINTY_SHARE * 100}% of its TTFT p50)${coverageNote(uncertaintyCoverage)}${worstText(stalls.filter((s) => s.max_ttft_uncertainty_ms !== null && s.max_ttft_uncertainty_ms > limitMs))}`,
      );
  }
  return {
    client_limited: reasons.length > 0,
    reasons,
    limited_agents: limitedAgents,
    schedule_lag_p99_ms: lag,
    event_loop_delay_p99_ms: eld,
    ttft_uncertainty_p99_ms: uncertainty,
    ttft_uncertainty_coverage: uncertaintyCoverage,
    allowed_share: ALLOWED_SHARE,
    confidence: CONFIDENCE,
    classes: classRows,
    agents: agentRows,
    stalls: stalls.slice(0, STALLS_LISTED),
    limits: {
      schedule_lag_ms: CLIENT_LAG_LIMIT_MS,
      event_loop_delay_p99_ms: CLIENT_EVENT_LOOP_P99_LIMIT_MS,
      event_loop_utilization: CLIENT_ELU_LIMIT,
      ttft_uncertainty_share_of_ttft_p50: CLIENT_TTFT_UNCERTAINTY_SHARE,
      ttft_uncertainty_floor_ms: CLIENT_TTFT_UNCERTAINTY_FLOOR_MS,
    },
    definition: `client_limited is true when, for some agent or class, the share of requests over a limit is above allowed_share (${ALLOWED_SHARE * 100}%) with the stated confidence (${CONFIDENCE * 100}%: the exact one-sided Clopper–Pearson lower bound of the share exceeds it) — an agent's requests sent more than limits.schedule_lag_ms after their intended time, or its or a class's first-token stamps uncertain by more than the larger of limits.ttft_uncertainty_floor_ms and limits.ttft_uncertainty_share_of_ttft_p50 × the class TTFT p50 — or when an agent's event-loop delay p99 (how late a 10 ms timer fired, beyond its period, sampled through the run) or event-loop utilisation exceeded its limit; one late request in a small sample does not decide it; the p99 figures are the worst agent or class, reported; the timing uncertainty is an estimate, not a bound: ttft_uncertainty_coverage is the lowest share of stamp errors (+ 0.5 ms) it covered in the agents' self-tests`,
  };
}

/** run.json field definitions of the client_health block. */
export const CLIENT_HEALTH_DEFINITIONS: Record<string, string> = {
  'client_health.ttft_uncertainty_p99_ms':
    'the largest class ttft_uncertainty_p99_ms, reported; the verdict reads the share of requests over the class limit (client_health.classes), not this order statistic',
  'client_health.classes[]':
    "per class: limit_ms (the larger of limits.ttft_uncertainty_floor_ms and limits.ttft_uncertainty_share_of_ttft_p50 × its TTFT p50), requests (its successful requests carrying first_content_uncertainty_ns), over_limit (those whose uncertainty exceeds limit_ms, at the histogram's 1% resolution), share = over_limit / requests, share_lower and share_upper (its exact one-sided Clopper–Pearson bounds at client_health.confidence), and limited (share_lower > allowed_share)",
  'client_health.agents[]':
    'per agent: schedule_lag (its requests with an intended send time, those sent more than limits.schedule_lag_ms late, the share and its bounds) and ttft_uncertainty (its successful requests carrying the uncertainty, those over their class limit among the first 2,000 itemised, the share and its bounds); limited when either share_lower exceeds allowed_share or its event-loop delay p99 or utilisation exceeded its limit',
  'client_health.limited_agents': 'the agents whose own evidence (above) made the run client-limited',
  'client_health.stalls':
    "the seconds of the run in which an agent had requests over a limit, worst first (at most 20): agent, second (from the shared start instant: a late request's send, an unread first token's arrival), how many requests, the largest first-token stamp uncertainty and schedule lag among them (ms), and the cause: what the records show, and what the agent's own stall log saw its process do in that second or the next (a garbage collection, its own work on a CPU, or no CPU: a busy host or a pause; each agent keeps its longest 20 stalls)",
  'client_health.allowed_share': 'the share of requests that may be over a limit before the run is client-limited',
  'client_health.confidence': 'the one-sided confidence with which a share must be shown above allowed_share',
};

function figure(over: number, requests: number): ShareFigure {
  const b = shareBounds(over, requests, CONFIDENCE);
  return {
    requests,
    over_limit: over,
    share: b.share === null ? null : round6(b.share),
    share_lower: round6(b.lower),
    share_upper: round6(b.upper),
  };
}

function limited(f: ShareFigure): boolean {
  return f.requests > 0 && f.share_lower > ALLOWED_SHARE;
}

function shareText(f: ShareFigure): string {
  return `${f.over_limit} of ${f.requests} (${pct(f.share ?? 0)}, above ${pct(f.share_lower)} with ${CONFIDENCE * 100}% confidence > ${pct(ALLOWED_SHARE)} allowed)`;
}

// An agent's itemised requests grouped by second; the cause is what the records show, and what the
// agent's own stall log (agent/stall-log.ts) saw its process do then, when it logged a stall there.
function stallsOf(
  id: string,
  events: readonly TimingEvent[],
  limitOf: ReadonlyMap<string, number>,
  agentStalls: readonly AgentStall[],
): Stall[] {
  const bySecond = new Map<number, Stall>();
  for (const e of events) {
    const s = bySecond.get(e.second) ?? {
      agent_id: id,
      second: e.second,
      requests: 0,
      max_ttft_uncertainty_ms: null,
      max_schedule_lag_ms: null,
      cause: '',
    };
    s.requests++;
    const u = e.uncertaintyNs === null ? null : round3(e.uncertaintyNs / 1e6);
    if (u !== null && u > (limitOf.get(e.cls) ?? CLIENT_TTFT_UNCERTAINTY_FLOOR_MS))
      s.max_ttft_uncertainty_ms = Math.max(s.max_ttft_uncertainty_ms ?? 0, u);
    const lag = e.lagNs === null ? null : round3(e.lagNs / 1e6);
    if (lag !== null && lag > CLIENT_LAG_LIMIT_MS) s.max_schedule_lag_ms = Math.max(s.max_schedule_lag_ms ?? 0, lag);
    bySecond.set(e.second, s);
  }
  const out = [...bySecond.values()].filter((s) => s.max_schedule_lag_ms !== null || s.max_ttft_uncertainty_ms !== null);
  for (const s of out) s.cause = causeOf(s, agentStalls);
  return out;
}

// What the records say held the requests: a late send is the agent not getting to its timer (its
// loop busy, or its process waiting for a CPU); an uncertain stamp is its loop busy while the
// first token's bytes waited unread.
function causeOf(s: Stall, agentStalls: readonly AgentStall[]): string {
  const parts: string[] = [];
  if (s.max_schedule_lag_ms !== null)
    parts.push(`sends up to ${s.max_schedule_lag_ms} ms late (the agent's loop busy or its process waiting for a CPU)`);
  if (s.max_ttft_uncertainty_ms !== null)
    parts.push(`first-token bytes up to ${s.max_ttft_uncertainty_ms} ms unread (the agent's event loop busy)`);
  // The agent's own log: a stall that ended in this second or the next covered the moment.
  const seen = agentStalls.filter((x) => x.second === s.second || x.second === s.second + 1).sort((x, y) => y.ms - x.ms)[0];
  if (seen) parts.push(`the agent logged its loop ${seen.ms} ms late at second ${seen.second}: ${STALL_CAUSE_WORDS[seen.cause](seen)}`);
  // Joined without a semicolon: the run's status reason separates its reasons with '; '.
  return parts.join(', and ');
}

const STALL_CAUSE_WORDS: Record<AgentStall['cause'], (x: AgentStall) => string> = {
  gc: (x) => `a garbage collection (${x.gc_ms} ms of it)`,
  busy: (x) => `its own work (the process on a CPU ${x.cpu_ms} ms of it)`,
  no_cpu: (x) => `the process got ${x.cpu_ms} ms of CPU in that time: it waited for a CPU (a busy host) or was paused`,
};

function held(s: Stall): number {
  return Math.max(s.max_schedule_lag_ms ?? 0, s.max_ttft_uncertainty_ms ?? 0);
}

function worstText(stalls: readonly Stall[]): string {
  if (stalls.length === 0) return '';
  const w = [...stalls].sort((x, y) => held(y) - held(x))[0]!;
  const more = stalls.length > 1 ? ` (${stalls.length} seconds in all)` : '';
  return ` — worst: ${w.agent_id} at second ${w.second}, ${w.requests} request${w.requests === 1 ? '' : 's'}, ${w.cause}${more}`;
}

// The uncertainty is an estimate (it misses the kernel's wake-up and time the process waited for a
// CPU): a reason that reads it says how often it covered the error where that was measured.
function coverageNote(coverage: number | null): string {
  return coverage === null
    ? ', an estimate whose coverage was not measured'
    : `, an estimate that covered ${(coverage * 100).toFixed(1)}% of stamp errors in the agents' self-tests`;
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
