// Pure: what each agent's share of a schedule asks of it, second by second — request starts,
// streamed chunks, finishes, streams open at once, prompt tokens — under a stated assumption of
// how fast the server answers (every request's first token after `ttftMs`, then one chunk per
// output token at `tokensPerS`). The headroom rule (rule.ts) prices these against an agent's
// self-test; `coordinator plan` prints them.
import { isFixedLength, meanLength } from '../../shared/lengths.js';
import type { Plan, TrafficClass } from '../../shared/plan.js';
import type { ClassSchedule, GlobalSchedule } from '../../shared/schedule.js';
import type { Share } from '../../shared/shares.js';
import { ownsOrdinal, splitInteger } from '../../shared/shares.js';

/** How fast the server is assumed to answer: the basis of every stream count and chunk rate. */
export interface ServerSpeed {
  /** Time to first token, ms. */
  ttftMs: number;
  /** Output tokens per second per stream after the first (one SSE chunk each). */
  tokensPerS: number;
}

export const DEFAULT_SPEED: ServerSpeed = { ttftMs: 200, tokensPerS: 50 };

/** One agent's share, at its busiest. */
export interface AgentLoad {
  agent: number;
  /** Requests (open loop: exactly; closed loop and sessions' turns: as the speed implies). */
  requests: number;
  /** Most request starts (and finishes) in any one second of the run. */
  peak_starts_per_s: number;
  peak_finishes_per_s: number;
  /** Most chunks in any one second. */
  peak_chunks_per_s: number;
  /** Most streams open at once. */
  peak_streams: number;
  /** Prompt tokens it sends over the run. */
  prompt_tokens: number;
  /** Per second of the run, index = second: starts, chunks and finishes (for the CPU projection). */
  seconds: { starts: Float64Array; chunks: Float64Array; finishes: Float64Array };
}

/**
 * Each agent's load for a fleet of `agents` (stripes as shares.ts cuts them); of class `only` alone
 * when given. One agent at a time: its streams' start and end instants (16 bytes a request of its
 * share) are held only while its own load is computed, never the whole schedule's at once.
 */
export function agentLoads(plan: Plan, schedule: GlobalSchedule, agents: number, speed: ServerSpeed, only?: number): AgentLoad[] {
  const horizonS = Math.ceil(plan.duration_s + longestRequestS(plan, schedule, speed)) + 2;
  return Array.from({ length: agents }, (_, a) => agentLoad(plan, schedule, { index: a, count: agents }, horizonS, speed, only));
}

function agentLoad(plan: Plan, schedule: GlobalSchedule, share: Share, horizonS: number, speed: ServerSpeed, only?: number): AgentLoad {
  const included = (ci: number): boolean => only === undefined || ci === only;
  const acc = new Accumulator(share.index, horizonS, openStreams(schedule, share, included));
  schedule.classes.forEach((cs, ci) => {
    if (!included(ci)) return;
    const cls = plan.classes[ci]!;
    if (cs.closedLoop) closedLoop(cls, cs, ci, share, acc, speed);
    else if (cs.sessions) sessions(cs, ci, share, acc, speed);
    else openLoop(cls, cs, ci, share, acc, speed);
  });
  return acc.result();
}

/** Whole-fleet totals per class: requests and prompt tokens (the same for any fleet size). */
export function classTotals(
  plan: Plan,
  schedule: GlobalSchedule,
  speed: ServerSpeed,
): Record<string, { requests: number; prompt_tokens: number }> {
  return Object.fromEntries(
    plan.classes.map((c, i) => {
      const [load] = agentLoads(plan, schedule, 1, speed, i);
      return [c.name, { requests: load!.requests, prompt_tokens: load!.prompt_tokens }];
    }),
  );
}

/** The first ordinal of `share`'s stripe of class `classIndex`; the others follow every N. */
function stripeStart(share: Share, classIndex: number): number {
  // shares.ts gives ordinal j to agent (j + class index) mod N: the first is (index − class index) mod N.
  const first = (((share.index - classIndex) % share.count) + share.count) % share.count;
  if (!ownsOrdinal(first, share, classIndex)) throw new Error('stripe arithmetic disagrees with shares.ts');
  return first;
}

/** How many open-loop streams (requests, sessions' turns) `share` starts: the size of its sweep. */
function openStreams(schedule: GlobalSchedule, share: Share, included: (ci: number) => boolean): number {
  let n = 0;
  schedule.classes.forEach((cs, ci) => {
    if (!included(ci) || cs.closedLoop) return;
    if (cs.sessions) for (let s = stripeStart(share, ci); s < cs.arrivalsNs.length; s += share.count) n += cs.sessions.turns[s]!;
    else n += splitInteger(cs.arrivalsNs.length, share, ci);
  });
  return n;
}

// Every request of an open-loop class goes to the agent that owns its ordinal.
function openLoop(cls: TrafficClass, cs: ClassSchedule, ci: number, share: Share, acc: Accumulator, speed: ServerSpeed): void {
  for (let j = stripeStart(share, ci); j < cs.arrivalsNs.length; j += share.count) {
    acc.request(cs.arrivalsNs[j]! / 1e9, cs.requests?.outputTokens[j] ?? fixed(cls.prompt.output_tokens), speed);
    acc.prompt(cs.requests?.inputTokens[j] ?? fixed(cls.prompt.input_tokens));
  }
}

// A session is pinned to the agent owning its ordinal; its turns follow each other, each after
// the previous reply (at the assumed speed) and its think time.
function sessions(cs: ClassSchedule, ci: number, share: Share, acc: Accumulator, speed: ServerSpeed): void {
  const sh = cs.sessions!;
  for (let s = stripeStart(share, ci); s < cs.arrivalsNs.length; s += share.count) {
    let atS = cs.arrivalsNs[s]! / 1e9;
    let context = 0;
    for (let k = 0; k < sh.turns[s]!; k++) {
      const out = sh.outputTokens[s]![k]!;
      context += sh.userTokens[s]![k]!;
      acc.request(atS, out, speed);
      acc.prompt(context);
      context += out;
      atS += durationS(out, speed) + (sh.thinkNs[s]![k] ?? 0) / 1e9;
    }
  }
}

// A closed-loop class keeps its (split) concurrency in flight: that many streams, each starting
// again as soon as it ends, for as long as each step lasts.
function closedLoop(cls: TrafficClass, cs: ClassSchedule, ci: number, share: Share, acc: Accumulator, speed: ServerSpeed): void {
  const out = meanLength(cls.prompt.output_tokens) ?? 0;
  const d = durationS(out, speed);
  const input = meanLength(cls.prompt.input_tokens) ?? 0;
  cs.concurrency.forEach((step, i) => {
    const next = cs.concurrency[i + 1];
    if (!next) return;
    const value = splitInteger(step.value, share, ci);
    if (value > 0) acc.steady(step.atNs / 1e9, next.atNs / 1e9, value, d, out, speed, input);
  });
}

function fixed(spec: TrafficClass['prompt']['input_tokens']): number {
  return isFixedLength(spec) ? spec : (meanLength(spec) ?? 0);
}

/** How long one request streams at the assumed speed, seconds. */
export function durationS(outputTokens: number, speed: ServerSpeed): number {
  return speed.ttftMs / 1000 + outputTokens / speed.tokensPerS;
}

function longestRequestS(plan: Plan, schedule: GlobalSchedule, speed: ServerSpeed): number {
  let most = 0;
  schedule.classes.forEach((cs, ci) => {
    const cls = plan.classes[ci]!;
    if (cs.sessions) {
      // A whole session's turns follow each other: its span is the sum of its turns and thinks.
      cs.sessions.turns.forEach((turns, s) => {
        let span = 0;
        for (let k = 0; k < turns; k++)
          span += durationS(cs.sessions!.outputTokens[s]![k]!, speed) + (cs.sessions!.thinkNs[s]![k] ?? 0) / 1e9;
        most = Math.max(most, span);
      });
    } else if (cs.requests) for (const o of cs.requests.outputTokens) most = Math.max(most, durationS(o, speed));
    else most = Math.max(most, durationS(fixed(cls.prompt.output_tokens), speed));
  });
  return most;
}

// Per agent: per-second starts, chunks, finishes, and the stream count's changes for its peak.
class Accumulator {
  private readonly starts: Float64Array;
  private readonly chunks: Float64Array;
  private readonly finishes: Float64Array;
  /** Streams of closed-loop steps per second (added to the open-loop peak in that second). */
  private readonly steadyStreams: Float64Array;
  /** Open-loop streams' start and end instants, s: sized exactly (a plan may hold millions), sorted once in place. */
  private readonly opens: Float64Array;
  private readonly closes: Float64Array;
  private streams = 0;
  private requests = 0;
  private promptTokens = 0;

  constructor(
    private readonly agent: number,
    private readonly horizonS: number,
    openStreams: number,
  ) {
    this.starts = new Float64Array(horizonS);
    this.chunks = new Float64Array(horizonS);
    this.finishes = new Float64Array(horizonS);
    this.steadyStreams = new Float64Array(horizonS);
    this.opens = new Float64Array(openStreams);
    this.closes = new Float64Array(openStreams);
  }

  request(atS: number, outputTokens: number, speed: ServerSpeed): void {
    const endS = atS + durationS(outputTokens, speed);
    this.requests++;
    this.add(this.starts, atS, 1);
    this.add(this.finishes, endS, 1);
    this.spread(this.chunks, atS + speed.ttftMs / 1000, endS, outputTokens);
    this.opens[this.streams] = atS;
    this.closes[this.streams++] = endS;
  }

  prompt(tokens: number): void {
    this.promptTokens += tokens;
  }

  // `streams` always in flight over [fromS, toS), each lasting dS: streams/dS starts and finishes a second.
  steady(fromS: number, toS: number, streams: number, dS: number, outputTokens: number, speed: ServerSpeed, inputTokens: number): void {
    const perS = streams / dS;
    this.spread(this.starts, fromS, toS, perS * (toS - fromS));
    this.spread(this.finishes, fromS + dS, toS + dS, perS * (toS - fromS));
    this.spread(this.chunks, fromS, toS, streams * speed.tokensPerS * ((dS - speed.ttftMs / 1000) / dS) * (toS - fromS));
    for (let s = Math.max(0, Math.floor(fromS)); s < Math.min(this.horizonS, Math.ceil(toS)); s++) this.steadyStreams[s]! += streams;
    const n = perS * (toS - fromS);
    this.requests += n;
    this.promptTokens += n * inputTokens;
    void outputTokens;
  }

  result(): AgentLoad {
    // Sweep the open-loop streams' starts and ends in time order (an end before a start at the
    // same instant): the most open at once within each second, and across each second.
    if (this.streams !== this.opens.length) throw new Error('open-loop streams miscounted for the headroom sweep');
    const opens = this.opens.sort();
    const closes = this.closes.sort();
    const peakIn = new Float64Array(this.horizonS);
    const bin = (t: number): number => Math.min(this.horizonS - 1, Math.max(0, Math.floor(t)));
    let open = 0;
    let o = 0;
    let c = 0;
    let lastBin = 0;
    while (o < opens.length || c < closes.length) {
      const isClose = c < closes.length && (o >= opens.length || closes[c]! <= opens[o]!);
      const t = isClose ? closes[c++]! : opens[o++]!;
      const b = bin(t);
      // The seconds passed over with no edge hold what was open across them.
      for (let s = lastBin + 1; s <= b; s++) peakIn[s] = Math.max(peakIn[s]!, open);
      lastBin = Math.max(lastBin, b);
      open += isClose ? -1 : 1;
      peakIn[b] = Math.max(peakIn[b]!, open);
    }
    let peakStreams = 0;
    for (let s = 0; s < this.horizonS; s++) peakStreams = Math.max(peakStreams, peakIn[s]! + this.steadyStreams[s]!);
    const seconds = { starts: this.starts, chunks: this.chunks, finishes: this.finishes };
    return {
      agent: this.agent,
      requests: Math.round(this.requests),
      peak_starts_per_s: round2(max(this.starts)),
      peak_finishes_per_s: round2(max(this.finishes)),
      peak_chunks_per_s: round2(max(this.chunks)),
      peak_streams: Math.ceil(peakStreams),
      prompt_tokens: Math.round(this.promptTokens),
      seconds,
    };
  }

  private add(bins: Float64Array, atS: number, v: number): void {
    const s = Math.floor(atS);
    if (s >= 0 && s < this.horizonS) bins[s]! += v;
  }

  // `total` spread evenly over [fromS, toS).
  private spread(bins: Float64Array, fromS: number, toS: number, total: number): void {
    if (toS <= fromS) {
      this.add(bins, fromS, total);
      return;
    }
    const rate = total / (toS - fromS);
    for (let s = Math.max(0, Math.floor(fromS)); s < Math.min(this.horizonS, Math.ceil(toS)); s++) {
      const overlap = Math.min(toS, s + 1) - Math.max(fromS, s);
      if (overlap > 0) bins[s]! += rate * overlap;
    }
  }
}

function max(xs: Float64Array): number {
  let m = 0;
  for (const x of xs) m = Math.max(m, x);
  return m;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
