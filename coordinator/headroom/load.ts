// Pure: what each agent's share of a schedule asks of it, second by second — request starts,
// streamed chunks, finishes, streams open at once, prompt tokens — under a stated assumption of
// how fast the server answers (every request's first token after `ttftMs`, then one chunk per
// output token at `tokensPerS`). The headroom rule (rule.ts) prices these against an agent's
// self-test; `coordinator plan` prints them.
import { isFixedLength, meanLength } from '../../shared/lengths.js';
import type { Plan, TrafficClass } from '../../shared/plan.js';
import type { ClassSchedule, GlobalSchedule } from '../../shared/schedule.js';
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

/** Each agent's load for a fleet of `agents` (stripes as shares.ts cuts them); of class `only` alone when given. */
export function agentLoads(plan: Plan, schedule: GlobalSchedule, agents: number, speed: ServerSpeed, only?: number): AgentLoad[] {
  const horizonS = Math.ceil(plan.duration_s + longestRequestS(plan, schedule, speed)) + 2;
  const acc = Array.from({ length: agents }, (_, a) => new Accumulator(a, horizonS));
  schedule.classes.forEach((cs, ci) => {
    const cls = plan.classes[ci]!;
    if (only !== undefined && ci !== only) return;
    if (cs.closedLoop) closedLoop(cls, cs, ci, acc, speed);
    else if (cs.sessions) sessions(cls, cs, ci, acc, speed);
    else openLoop(cls, cs, ci, acc, speed);
  });
  return acc.map((a) => a.result());
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

// Every request of an open-loop class goes to the agent that owns its ordinal.
function openLoop(cls: TrafficClass, cs: ClassSchedule, ci: number, acc: Accumulator[], speed: ServerSpeed): void {
  const n = acc.length;
  cs.arrivalsNs.forEach((t, j) => {
    const owner = acc[ownerOf(j, ci, n)]!;
    owner.request(t / 1e9, cs.requests?.outputTokens[j] ?? fixed(cls.prompt.output_tokens), speed);
    owner.prompt(cs.requests?.inputTokens[j] ?? fixed(cls.prompt.input_tokens));
  });
}

// A session is pinned to the agent owning its ordinal; its turns follow each other, each after
// the previous reply (at the assumed speed) and its think time.
function sessions(cls: TrafficClass, cs: ClassSchedule, ci: number, acc: Accumulator[], speed: ServerSpeed): void {
  const n = acc.length;
  const sh = cs.sessions!;
  cs.arrivalsNs.forEach((t, s) => {
    const owner = acc[ownerOf(s, ci, n)]!;
    let atS = t / 1e9;
    let context = 0;
    for (let k = 0; k < sh.turns[s]!; k++) {
      const out = sh.outputTokens[s]![k]!;
      context += sh.userTokens[s]![k]!;
      owner.request(atS, out, speed);
      owner.prompt(context);
      context += out;
      atS += durationS(out, speed) + (sh.thinkNs[s]![k] ?? 0) / 1e9;
    }
  });
  void cls;
}

// A closed-loop class keeps its (split) concurrency in flight: that many streams, each starting
// again as soon as it ends, for as long as each step lasts.
function closedLoop(cls: TrafficClass, cs: ClassSchedule, ci: number, acc: Accumulator[], speed: ServerSpeed): void {
  const out = meanLength(cls.prompt.output_tokens) ?? 0;
  const d = durationS(out, speed);
  const input = meanLength(cls.prompt.input_tokens) ?? 0;
  for (const [a, owner] of acc.entries()) {
    cs.concurrency.forEach((step, i) => {
      const next = cs.concurrency[i + 1];
      if (!next) return;
      const value = splitInteger(step.value, { index: a, count: acc.length }, ci);
      if (value > 0) owner.steady(step.atNs / 1e9, next.atNs / 1e9, value, d, out, speed, input);
    });
  }
}

function ownerOf(ordinal: number, classIndex: number, agents: number): number {
  // The one share whose stripe holds the ordinal (shares.ts: (ordinal + class index) mod N).
  const a = (ordinal + classIndex) % agents;
  if (!ownsOrdinal(ordinal, { index: a, count: agents }, classIndex)) throw new Error('stripe arithmetic disagrees with shares.ts');
  return a;
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
  /** Open-loop streams' start and end instants, s (numbers, sorted once: a plan may hold millions). */
  private readonly opens: number[] = [];
  private readonly closes: number[] = [];
  private requests = 0;
  private promptTokens = 0;

  constructor(
    private readonly agent: number,
    private readonly horizonS: number,
  ) {
    this.starts = new Float64Array(horizonS);
    this.chunks = new Float64Array(horizonS);
    this.finishes = new Float64Array(horizonS);
    this.steadyStreams = new Float64Array(horizonS);
  }

  request(atS: number, outputTokens: number, speed: ServerSpeed): void {
    const endS = atS + durationS(outputTokens, speed);
    this.requests++;
    this.add(this.starts, atS, 1);
    this.add(this.finishes, endS, 1);
    this.spread(this.chunks, atS + speed.ttftMs / 1000, endS, outputTokens);
    this.opens.push(atS);
    this.closes.push(endS);
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
    const opens = Float64Array.from(this.opens).sort();
    const closes = Float64Array.from(this.closes).sort();
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
