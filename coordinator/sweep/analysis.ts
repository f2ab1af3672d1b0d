// Pure: what the stages add up to — the capacity and its bracket, the throughput knee, how many
// agents a client-limited stage needed, and the answer in plain words.
import type { SweepScale, SweepSlo } from '../../shared/sweep.js';
import type { StopRule, Verdict } from './strategy.js';
import { fmt, scaleUnit } from './strategy.js';

/** What the analysis reads from each stage. */
export interface StageSummary {
  value: number;
  verdict: Verdict;
  reason: string;
  achieved_rps: number | null;
  /** Arrivals of the schedule in the measured window per second (the offered load actually drawn). */
  scheduled_rps: number | null;
  all_classes_rps: number | null;
  agents: number;
  client_limited_agents: { agent_id: string; requests_per_s: number }[];
}

/** The capacity and its bracket. */
export interface Capacity {
  capacity: number | null;
  bracket: [number | null, number | null];
  /** Passing stages above a failing one (noise or a non-monotone server): they do not count. */
  ignored_passes: number[];
}

/**
 * capacity = the highest passing value below every failing value; bracket = [capacity, the lowest
 * failing value above it]. A pass above a fail is not believed (it is reported in ignored_passes).
 */
export function capacityOf(stages: readonly StageSummary[]): Capacity {
  const fails = stages.filter((s) => s.verdict === 'fail').map((s) => s.value);
  const lowestFail = fails.length > 0 ? Math.min(...fails) : null;
  const passes = stages.filter((s) => s.verdict === 'pass').map((s) => s.value);
  const believed = passes.filter((v) => lowestFail === null || v < lowestFail);
  const capacity = believed.length > 0 ? Math.max(...believed) : null;
  const above = fails.filter((v) => capacity === null || v > capacity);
  return {
    capacity,
    bracket: [capacity, above.length > 0 ? Math.min(...above) : null],
    ignored_passes: passes.filter((v) => !believed.includes(v)).sort((a, b) => a - b),
  };
}

/** Elasticity below this means achieved throughput has stopped following the offered load. */
export const KNEE_ELASTICITY = 0.5;

/** The throughput knee. */
export interface Knee {
  value: number | null;
  achieved_rps: number | null;
  /** The first stage past the knee and its elasticity. */
  next_value: number | null;
  elasticity: number | null;
}

/**
 * Over the stages that measured throughput (client-limited and failed-to-run ones excluded), sorted by
 * value, with x = the offered load (scale "rate": the arrivals the schedule actually put in the window
 * per second, since a Poisson draw differs from the nominal rate; "concurrency": the value):
 * elasticity_i = (Δachieved / achieved_{i−1}) / (Δx / x_{i−1}), the relative gain in achieved req/s
 * per relative gain in offered load (about 1 while the server keeps up). The knee is the value of the
 * stage before the first one whose elasticity falls below 0.5; null when that never happens.
 */
export function kneeOf(stages: readonly StageSummary[], scale: SweepScale): Knee {
  const pts = stages
    .filter((s) => (s.verdict === 'pass' || s.verdict === 'fail') && s.achieved_rps !== null)
    .map((s) => ({ v: s.value, x: scale === 'concurrency' ? s.value : (s.scheduled_rps ?? s.value), a: s.achieved_rps! }))
    .sort((p, q) => p.v - q.v);
  for (let i = 1; i < pts.length; i++) {
    const p = pts[i - 1]!;
    const q = pts[i]!;
    // Nothing departed at p (an overloaded stage whose requests all finished after its window): no base.
    if (q.x <= p.x || p.a <= 0) continue;
    const e = (q.a - p.a) / p.a / ((q.x - p.x) / p.x);
    if (e < KNEE_ELASTICITY) return { value: p.v, achieved_rps: p.a, next_value: q.v, elasticity: Math.round(e * 1000) / 1000 };
  }
  return { value: null, achieved_rps: null, next_value: null, elasticity: null };
}

/** Keep each agent below this share of the rate at which one was seen limited. */
export const AGENT_HEADROOM = 0.8;

/** How many agents a client-limited stage needed. */
export interface ClientAdvice {
  stage_value: number;
  agents_used: number;
  limited_agents: string[];
  per_agent_ceiling_rps: number;
  load_rps: number;
  agents_needed: number;
  text: string;
}

/**
 * For the first client-limited stage no re-measure decided: per-agent ceiling = the lowest request rate (every class) of
 * an agent that was limited there; load = every class's request rate at that stage; agents needed =
 * ⌈load / (0.8 · ceiling)⌉, at least one more than were used.
 */
export function clientAdvice(stages: readonly StageSummary[], scale: SweepScale): ClientAdvice | null {
  // A client-limited stage that a re-measure then decided needs no more agents.
  const decided = (v: number) => stages.some((y) => y.value === v && (y.verdict === 'pass' || y.verdict === 'fail'));
  const s = stages.find((x) => x.verdict === 'client_limited' && !decided(x.value));
  if (!s) return null;
  const rates = s.client_limited_agents.map((a) => a.requests_per_s).filter((r) => r > 0);
  const load = s.all_classes_rps ?? 0;
  const ceiling = rates.length > 0 ? Math.min(...rates) : s.agents > 0 ? load / s.agents : 0;
  const needed = ceiling > 0 ? Math.max(s.agents + 1, Math.ceil(load / (AGENT_HEADROOM * ceiling))) : s.agents + 1;
  const unit = scaleUnit(scale);
  return {
    stage_value: s.value,
    agents_used: s.agents,
    limited_agents: s.client_limited_agents.map((a) => a.agent_id),
    per_agent_ceiling_rps: Math.round(ceiling * 1000) / 1000,
    load_rps: load,
    agents_needed: needed,
    text:
      `the client, not the server, saturated first at ${fmt(s.value)} ${unit}: add agents or workers — ` +
      `an agent was limited at ${fmt(ceiling)} req/s, so ${fmt(load)} req/s needs about ${needed} agents (${s.agents} were used)`,
  };
}

/** Everything the answer sentence draws on. */
export interface AnswerInput {
  cls: string;
  scale: SweepScale;
  background: string[];
  slo: SweepSlo;
  stages: readonly StageSummary[];
  capacity: Capacity;
  knee: Knee;
  advice: ClientAdvice | null;
  stopRule: StopRule;
  stopReason: string;
}

/** The plain-language answer. */
export function answerOf(a: AnswerInput): string {
  const unit = a.scale === 'concurrency' ? 'concurrent requests' : scaleUnit(a.scale);
  const ctx = a.background.length > 0 ? ` with ${a.background.join(', ')} running as planned` : '';
  const slo = sloText(a.slo, a.scale);
  const [lo, hi] = a.capacity.bracket;
  const parts: string[] = [];
  if (lo !== null && hi !== null) {
    const failing = a.stages.find((s) => s.value === hi);
    parts.push(
      `${a.cls} meets its SLO (${slo}) up to ${fmt(lo)} ${unit}${ctx}; at ${fmt(hi)} ${unit} it does not (${failing?.reason ?? 'fail'}). Capacity ${fmt(lo)} ${unit}, bracket [${fmt(lo)}, ${fmt(hi)}].`,
    );
  } else if (lo !== null) {
    parts.push(
      `${a.cls} meets its SLO (${slo}) at every value measured up to ${fmt(lo)} ${unit}${ctx}; no stage failed, so the capacity is at least ${fmt(lo)} ${unit}.`,
    );
  } else if (hi !== null) {
    parts.push(`${a.cls} fails its SLO (${slo}) already at ${fmt(hi)} ${unit}${ctx}, the lowest value measured: the capacity is below it.`);
  } else {
    parts.push(`No stage gave a verdict on the server, so there is no capacity to report.`);
  }
  if (a.knee.value !== null)
    parts.push(
      `Achieved throughput stops following the offered load after ${fmt(a.knee.value)} ${unit} (${fmt(a.knee.achieved_rps!)} req/s achieved).`,
    );
  if (a.capacity.ignored_passes.length > 0)
    parts.push(
      `Passing stages above a failing one (${a.capacity.ignored_passes.map(fmt).join(', ')}) were not counted: the result is noisy, re-run with longer stages.`,
    );
  if (a.advice) parts.push(`${capitalise(a.advice.text)}.`);
  parts.push(`The sweep stopped: ${a.stopReason}.`);
  return parts.join(' ');
}

function sloText(slo: SweepSlo, scale: SweepScale): string {
  const parts: string[] = [];
  if (slo.ttft_p95_ms !== undefined) parts.push(`p95 TTFT ≤ ${slo.ttft_p95_ms} ms`);
  if (slo.tpot_p95_ms !== undefined) parts.push(`p95 TPOT ≤ ${slo.tpot_p95_ms} ms`);
  if (slo.success_rate_min !== undefined) parts.push(`success ≥ ${Math.round(slo.success_rate_min * 1000) / 10}%`);
  if (scale !== 'concurrency') parts.push('≥ 90% of offered throughput achieved');
  return parts.join(', ');
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
