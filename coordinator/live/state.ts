// The live state of one run, built only by listening: merged 1 s intervals and new records from
// the collector, agent health from the run's agent states, and the latest server sample from
// whoever scrapes. `snapshot()` freezes it into plain data that the terminal view and the
// /metrics exposition render; neither ever drives the run.

import { failureRank } from '../../figures/failure-rank.js';
import { meetsSlo } from '../../figures/window-stats.js';
import type { Histogram } from '../../shared/histogram.js';
import { mergeInto, newHistogram, nsToMs, percentilesNs } from '../../shared/histogram.js';
import { getOrCreate } from '../../shared/maps.js';
import type { RequestRecord } from '../../shared/metrics.js';
import type { Plan } from '../../shared/plan.js';
import type { AgentHealth } from '../../shared/protocol.js';
import type { GlobalSchedule } from '../../shared/schedule.js';
import { arrivalsBetween, concurrencyAt } from '../../shared/schedule.js';
import { declaredBounds } from '../../shared/slo-bounds.js';
import type { CollectorListener, SecondCounts } from '../collector.js';

/** The latency metrics kept as cumulative live histograms (and exported by /metrics). */
export const LIVE_METRICS = ['ttft', 'tpot', 'e2e'] as const;

/** One of LIVE_METRICS. */
export type LiveMetric = (typeof LIVE_METRICS)[number];

/** How many of the latest merged seconds the "recent" p95 TTFT spans. */
export const RECENT_S = 10;

const NS_PER_S = 1e9;

/** The latest server sample (from the scraper); any figure the server does not expose is null. */
export interface ServerSample {
  running: number | null;
  waiting: number | null;
  saturation: number | null;
}

/** Where the live view reads the server's state; `null` until something was scraped. */
export interface ServerSource {
  latestServer(): ServerSample | null;
}

/** How the run sees one agent right now. */
export interface AgentView {
  id: string;
  lost: boolean;
  final: boolean;
  health: AgentHealth | null;
}

/** One class at one instant. */
export interface ClassSnapshot {
  name: string;
  closedLoop: boolean;
  /** Open loop: arrivals the global schedule placed before the end of the latest merged second. */
  offered: number | null;
  /** Closed loop: the target concurrency now. */
  targetConcurrency: number | null;
  sent: number;
  inFlight: number;
  completed: number;
  failed: number;
  /** p95 TTFT of the successful requests of the last RECENT_S merged seconds (the table's figure). */
  ttftP95RecentMs: number | null;
  ttftP95RunMs: number | null;
  /**
   * The same seconds' p95 TTFT with each failed request ranked +∞, as the SLO verdict ranks them:
   * null when the failures decide it (see sloFailuresDecide) or nothing was measured.
   */
  sloP95RecentMs: number | null;
  /** More than 5% of the recent requests failed, so the recent p95 is +∞ whatever the successes carried. */
  sloFailuresDecide: { failed: number; requests: number } | null;
  /** The class SLO's TTFT bound in ms (its first TTFT row of the SLO table, p95 by default; null when it declares none). */
  sloTtftMs: number | null;
  /** That bound in words, e.g. "p95 TTFT" (the quantile sloP95RecentMs ranks at). */
  sloTtftWords?: string;
  /** The recent p95 TTFT, failures ranked +∞, is past the SLO bound: the live view shows the class in red. */
  sloBreached: boolean;
  /** Requests that succeeded and met every per-request bound of the class SLO (null without an SLO): goodput. */
  good: number | null;
  /** Cumulative merged histograms (ns) of the seconds merged so far. */
  histograms: ReadonlyMap<LiveMetric, Histogram>;
  /** Finished requests by status and HTTP status (from records, which arrive as requests end). */
  outcomes: readonly { status: string; httpStatus: number | null; count: number }[];
}

/** One agent at one instant. */
export interface AgentSnapshot {
  id: string;
  state: 'running' | 'finished' | 'lost';
  lagP99Ms: number | null;
  lagMaxMs: number | null;
  loopP99Ms: number | null;
  loopMaxMs: number | null;
}

/** Everything the views show, as plain data. */
export interface LiveSnapshot {
  runId: string;
  planName: string;
  elapsedS: number;
  durationS: number;
  /** Seconds of interval data merged across agents so far (the class counts are as of then). */
  mergedS: number;
  classes: ClassSnapshot[];
  agents: AgentSnapshot[];
  server: ServerSample | null;
}

interface ClassState {
  sent: number;
  completed: number;
  failed: number;
  histograms: Map<LiveMetric, Histogram>;
  /** second → that second's TTFT histograms (several when late data arrived). */
  recentTtft: Map<number, Histogram[]>;
  /** second → that second's finished requests, ok and failed (summed over late data). */
  recentEnded: Map<number, { completed: number; failed: number }>;
  outcomes: Map<string, { status: string; httpStatus: number | null; count: number }>;
  good: number;
}

/** Accumulates the live state of one run (listens to the collector). */
export class LiveState implements CollectorListener {
  private readonly classes = new Map<string, ClassState>();
  private mergedS = 0;
  private readonly scratch = newHistogram();
  /** plan.records.sample_every is set: records are a sample. */
  private readonly sampled: boolean;

  constructor(
    private readonly plan: Plan,
    private readonly schedule: GlobalSchedule,
    private readonly runId: string,
  ) {
    for (const cls of plan.classes) this.classes.set(cls.name, emptyClass());
    this.sampled = typeof plan.records === 'object';
  }

  second(second: number, cls: string, counts: SecondCounts, histograms: ReadonlyMap<string, Histogram>): void {
    const c = this.classes.get(cls);
    if (!c) return;
    c.sent += counts.issued;
    c.completed += counts.completed;
    c.failed += counts.failed;
    for (const m of LIVE_METRICS) {
      const h = histograms.get(m);
      if (h) mergeInto(getOrCreate(c.histograms, m, newHistogram), h);
    }
    const ttft = histograms.get('ttft');
    if (ttft) getOrCreate(c.recentTtft, second, () => []).push(ttft);
    const ended = getOrCreate(c.recentEnded, second, () => ({ completed: 0, failed: 0 }));
    ended.completed += counts.completed;
    ended.failed += counts.failed;
    this.mergedS = Math.max(this.mergedS, second + 1);
    for (const s of c.recentTtft.keys()) if (s <= this.mergedS - 1 - RECENT_S) c.recentTtft.delete(s);
    for (const s of c.recentEnded.keys()) if (s <= this.mergedS - 1 - RECENT_S) c.recentEnded.delete(s);
  }

  finished(r: RequestRecord): void {
    const c = this.classes.get(r.class);
    // Sampled records (plan.records): the records here are a sample, so outcome counts and goodput
    // are not shown live (run.json has them, from the agents' own counts).
    if (!c || this.sampled) return;
    const key = `${r.status} ${r.http_status}`;
    getOrCreate(c.outcomes, key, () => ({ status: r.status, httpStatus: r.http_status, count: 0 })).count++;
    const slo = this.plan.classes.find((x) => x.name === r.class)?.slo;
    if (slo && r.status === 'ok' && meetsSlo(r, slo)) c.good++;
  }

  /** The state at `elapsedS` seconds after the start. */
  snapshot(elapsedS: number, agents: readonly AgentView[], server: ServerSample | null): LiveSnapshot {
    return {
      runId: this.runId,
      planName: this.plan.name,
      elapsedS,
      durationS: this.plan.duration_s,
      mergedS: this.mergedS,
      classes: this.plan.classes.map((cls, i) => this.classSnapshot(cls.name, i, elapsedS)),
      agents: agents.map(agentSnapshot),
      server,
    };
  }

  private classSnapshot(name: string, index: number, elapsedS: number): ClassSnapshot {
    const c = this.classes.get(name)!;
    const sched = this.schedule.classes[index]!;
    const ttft = c.histograms.get('ttft');
    const slo = this.plan.classes[index]!.slo;
    // The live view follows the class's first TTFT bound of the SLO table, at that bound's quantile.
    const ttftBound = slo ? declaredBounds(slo).find((b) => b.row.metric === 'ttft') : undefined;
    const recent = this.recentP95(c, ttftBound?.row.quantile ?? 0.95);
    const bound = ttftBound?.bound ?? null;
    return {
      name,
      closedLoop: sched.closedLoop,
      offered: sched.closedLoop ? null : arrivalsBetween(sched.arrivalsNs, 0, this.mergedS * NS_PER_S),
      targetConcurrency: sched.closedLoop ? concurrencyAt(sched.concurrency, Math.max(0, elapsedS) * NS_PER_S) : null,
      sent: c.sent,
      inFlight: c.sent - c.completed - c.failed,
      completed: c.completed,
      failed: c.failed,
      ttftP95RecentMs: recent.successfulMs,
      ttftP95RunMs: ttft ? p95Ms(ttft) : null,
      sloP95RecentMs: recent.rankedMs,
      sloFailuresDecide: recent.failuresDecide,
      sloTtftMs: bound,
      ...(ttftBound && { sloTtftWords: ttftBound.row.words }),
      sloBreached: bound !== null && (recent.failuresDecide !== null || (recent.rankedMs !== null && recent.rankedMs > bound)),
      good: slo && !this.sampled ? c.good : null,
      histograms: c.histograms,
      outcomes: [...c.outcomes.values()]
        .sort((a, b) => (a.status + a.httpStatus).localeCompare(b.status + b.httpStatus))
        .map((o) => ({ ...o })),
    };
  }

  // Merges the last RECENT_S seconds' TTFT histograms into one scratch histogram (never averaging
  // p95s), and ranks the same seconds' failed requests +∞ above them for the SLO's figure.
  private recentP95(
    c: ClassState,
    q: number,
  ): {
    successfulMs: number | null;
    rankedMs: number | null;
    failuresDecide: { failed: number; requests: number } | null;
  } {
    this.scratch.reset();
    const from = this.mergedS - 1 - RECENT_S;
    for (const [s, hs] of c.recentTtft) if (s > from) for (const h of hs) mergeInto(this.scratch, h);
    let requests = 0;
    let failed = 0;
    for (const [s, e] of c.recentEnded)
      if (s > from) {
        requests += e.completed + e.failed;
        failed += e.failed;
      }
    const measured = this.scratch.totalCount;
    const at = failureRank({ requests: Math.max(requests, measured + failed), failed, measured }, q);
    return {
      successfulMs: p95Ms(this.scratch),
      rankedMs: at.kind === 'measured' ? nsToMs(percentilesNs(this.scratch, [at.rank / measured])[0]!) : null,
      failuresDecide: at.kind === 'failures_decide' ? { failed, requests } : null,
    };
  }
}

function emptyClass(): ClassState {
  return {
    sent: 0,
    completed: 0,
    failed: 0,
    histograms: new Map(),
    recentTtft: new Map(),
    recentEnded: new Map(),
    outcomes: new Map(),
    good: 0,
  };
}

function p95Ms(h: Histogram): number | null {
  return h.totalCount > 0 ? nsToMs(percentilesNs(h, [0.95])[0]!) : null;
}

function agentSnapshot(a: AgentView): AgentSnapshot {
  return {
    id: a.id,
    state: a.lost ? 'lost' : a.final ? 'finished' : 'running',
    lagP99Ms: a.health?.schedule_lag_p99_ms ?? null,
    lagMaxMs: a.health?.schedule_lag_max_ms ?? null,
    loopP99Ms: a.health?.event_loop_delay_p99_ms ?? null,
    loopMaxMs: a.health?.event_loop_delay_max_ms ?? null,
  };
}
