// What the client's own timing did to a run, request by request, as the records arrive: each
// successful request's first_content_uncertainty_ns (how long its first token's bytes may have
// waited unread before the agent stamped them, agent/loop-busy.ts) in small HDR histograms per
// agent and per class; each agent's count of requests sent later than the schedule-lag limit; and
// the requests over either limit itemised by agent and second of the run, so a client-limited
// verdict rests on the share of requests affected (client-health.ts) and names when it happened.
import * as hdr from 'hdr-histogram-js';
import type { Histogram } from '../shared/histogram.js';
import { nsToMs, percentilesNs, recordNs } from '../shared/histogram.js';
import { getOrCreate } from '../shared/maps.js';
import type { RequestRecord } from '../shared/metrics.js';

// 1 µs … 1 h at 2 significant digits (≤ 1%): 27 KiB per histogram instead of the 264 KiB of the
// latency configuration, since one is kept per agent; an uncertainty needs no ns resolution.
function newUncertaintyHistogram(): Histogram {
  const h = new hdr.Float64Histogram(1000, 3_600_000_000_000, 2);
  h.autoResize = false;
  return h;
}

/** A request is itemised when its stamp uncertainty or its schedule lag exceeds this (the smallest limit either is held to). */
export const ITEMISE_FLOOR_NS = 50_000_000;
/** Itemised requests kept per agent: the first ones; later ones are still counted in the shares, not itemised. */
export const ITEMISED_PER_AGENT = 2000;

/** One request whose client-side timing exceeded the floor. */
export interface TimingEvent {
  /** Second of the run (from the shared start instant) in which the client held it: its send when late, else its first token's arrival. */
  second: number;
  cls: string;
  /** Its first-token stamp uncertainty and schedule lag, ns (null when it carries none). */
  uncertaintyNs: number | null;
  lagNs: number | null;
}

/** One agent's schedule-lag count: requests with an intended send, and those sent later than `limitNs`. */
export interface LagCount {
  measured: number;
  over: number;
}

/** Collects the client-side timing figures of a run's records. */
export class TtftUncertainty {
  private readonly byAgent = new Map<number, Histogram>();
  private readonly byClass = new Map<string, Histogram>();
  private readonly lag = new Map<number, LagCount>();
  private readonly events = new Map<number, TimingEvent[]>();

  constructor(private readonly lagLimitNs = ITEMISE_FLOOR_NS) {}

  /** One new record of agent `agent` (records of agents that do not measure the uncertainty count for the lag only). */
  add(agent: number, r: RequestRecord): void {
    const lagNs = r.intended_ns === null ? null : r.sent_ns - r.intended_ns;
    if (lagNs !== null) {
      const c = getOrCreate(this.lag, agent, () => ({ measured: 0, over: 0 }));
      c.measured++;
      if (lagNs > this.lagLimitNs) c.over++;
    }
    const u = r.status === 'ok' ? (r.first_content_uncertainty_ns ?? null) : null;
    if (u !== null) {
      recordNs(getOrCreate(this.byAgent, agent, newUncertaintyHistogram), u);
      recordNs(getOrCreate(this.byClass, r.class, newUncertaintyHistogram), u);
    }
    if ((u ?? 0) > ITEMISE_FLOOR_NS || (lagNs ?? 0) > ITEMISE_FLOOR_NS) {
      const list = getOrCreate(this.events, agent, () => []);
      if (list.length < ITEMISED_PER_AGENT)
        list.push({ second: Math.floor(Math.max(0, heldAtNs(r, lagNs)) / 1e9), cls: r.class, uncertaintyNs: u, lagNs });
    }
  }

  /** The p99 in ms of one agent's requests, or null when none carried the figure. */
  agentP99Ms(agent: number): number | null {
    return p99Ms(this.byAgent.get(agent));
  }

  /** How many of one agent's successful requests carried the uncertainty. */
  agentCount(agent: number): number {
    return this.byAgent.get(agent)?.totalCount ?? 0;
  }

  /** The p99 in ms over every agent's requests of one class, or null. */
  classP99Ms(cls: string): number | null {
    return p99Ms(this.byClass.get(cls));
  }

  /** Of one class's successful requests that carried the figure: how many, and how many above `limitMs`. */
  classCount(cls: string, limitMs: number): { measured: number; over: number } {
    const h = this.byClass.get(cls);
    if (!h) return { measured: 0, over: 0 };
    return { measured: h.totalCount, over: countAbove(h, limitMs * 1e6) };
  }

  /** One agent's schedule-lag count (null when none of its records had an intended send). */
  lagCount(agent: number): LagCount | null {
    return this.lag.get(agent) ?? null;
  }

  /** One agent's itemised requests, in arrival order. */
  eventsOf(agent: number): readonly TimingEvent[] {
    return this.events.get(agent) ?? [];
  }
}

// A late send was held at its send; an unread first token, when it arrived.
function heldAtNs(r: RequestRecord, lagNs: number | null): number {
  const first = r.first_content_ns ?? null;
  return (lagNs ?? 0) > ITEMISE_FLOOR_NS || first === null ? r.sent_ns : first;
}

function p99Ms(h: Histogram | undefined): number | null {
  if (!h || h.totalCount === 0) return null;
  return nsToMs(percentilesNs(h, [0.99])[0]!);
}

// Requests whose recorded value lies above `ns` (at the histogram's 1% resolution: a value within
// 1% of the limit may fall either side).
function countAbove(h: Histogram, ns: number): number {
  let over = 0;
  const it = h.recordedValuesIterator;
  it.reset();
  while (it.hasNext()) {
    const v = it.next();
    if (h.lowestEquivalentValue(v.valueIteratedTo) > ns) over += v.countAtValueIteratedTo;
  }
  return over;
}
