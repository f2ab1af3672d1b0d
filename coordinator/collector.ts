// Everything agents send during a run flows in here: records are written to requests.ndjson as
// they arrive and counted exactly; 1-second interval histograms are merged across agents and
// written to histograms.hlog and traffic.csv once every live agent has sent that second (or once it
// is older than the lateness bound, so a reconnecting agent delays the files but never blocks
// them); the run histograms of each agent are merged at the end. Percentiles are only ever read
// from merges. An interval that arrives after its second was written is counted, not written: a
// second has exactly one row.

import { ClassShape, expectedShape } from '../figures/class-shape.js';
import { histogramRankSummary } from '../figures/histogram-ranks.js';
import { IndexSet } from '../figures/index-set.js';
import { LoraTally } from '../figures/lora-tally.js';
import { OfferedArrivals } from '../figures/offered-arrivals.js';
import { SessionTurns } from '../figures/session-turns.js';
import { TtftUncertainty } from '../figures/timing-uncertainty.js';
import { ToolTally } from '../figures/tool-tally.js';
import { WindowStats } from '../figures/window-stats.js';
import { classApi } from '../shared/api-kinds.js';
import { AtomicLineStream } from '../shared/atomic-file.js';
import type { Histogram } from '../shared/histogram.js';
import { addEncoded, newHistogram, nsToMs, percentilesNs } from '../shared/histogram.js';
import { getOrCreate } from '../shared/maps.js';
import type { RequestRecord } from '../shared/metrics.js';
import { windowsAt, windowTimeNs } from '../shared/metrics.js';
import type { Plan } from '../shared/plan.js';
import type { IntervalClass } from '../shared/protocol.js';
import type { TalliesData } from '../shared/record-tally.js';
import type { GlobalSchedule } from '../shared/schedule.js';
import { arrivalsBetween, concurrencyAt } from '../shared/schedule.js';
import type { ExactMethod } from './exact-store.js';
import { ExactStore } from './exact-store.js';
import { HlogWriter } from './file-writers/hlog.js';
import type { AgentTimebase } from './file-writers/requests-ndjson.js';
import { formatRequestRow } from './file-writers/requests-ndjson.js';
import { TrafficCsvWriter } from './file-writers/traffic-csv.js';

const NS_PER_S = 1e9;
const NO_HISTOGRAMS: ReadonlyMap<string, Histogram> = new Map();

interface PendingSecond {
  contributors: Set<number>;
  classes: Map<string, { issued: number; completed: number; failed: number; histograms: Map<string, Histogram> }>;
}

/** One class's counts in one merged second. */
export interface SecondCounts {
  issued: number;
  completed: number;
  failed: number;
}

/**
 * What the live view and /metrics hear (they only listen; nothing here changes what is measured).
 * The histograms handed to `second` are never changed by the collector afterwards, so a listener
 * may keep them.
 */
export interface CollectorListener {
  /** A merged second of one class was written (late data for a second already written comes again). */
  second(second: number, cls: string, counts: SecondCounts, histograms: ReadonlyMap<string, Histogram>): void;
  /** A new (not duplicate) request record arrived. */
  finished(r: RequestRecord): void;
}

/** Per-agent totals from its records. */
export interface AgentTotals {
  requests: number;
  completed: number;
  failed: number;
}

/** Ingests one run's data. */
export class Collector {
  /** class → window → stats. */
  readonly stats = new Map<string, Map<string, WindowStats>>();
  /** class → window → metric → merged run histogram. */
  readonly merged = new Map<string, Map<string, Map<string, Histogram>>>();
  /** class → shape and start evidence for the validity gates. */
  readonly shapes = new Map<string, ClassShape>();
  /** Sessions classes → their figures by turn. */
  readonly sessionTurns = new Map<string, SessionTurns>();
  /** Classes with LoRA adapters: per-adapter counts and means. */
  readonly loraTallies = new Map<string, LoraTally>();
  /** Classes offering tools: tool-call timing and argument validity. */
  readonly toolTallies = new Map<string, ToolTally>();
  readonly agentTotals = new Map<number, AgentTotals>();
  /** First-token stamp uncertainty per agent and class (timing-uncertainty.ts). */
  readonly ttftUncertainty = new TtftUncertainty();
  /** Seconds written to the interval artifacts, and which agents contributed to each. */
  readonly intervalContributors: { second: number; agents: number[] }[] = [];
  lastDoneNs = 0;
  /** Distinct request records received (rows of requests.ndjson). */
  recordsReceived = 0;
  /** Re-sent requests that were already in the artifacts. */
  duplicatesDropped = 0;
  /** Agent intervals that arrived after their second was written (beyond the lateness bound). */
  lateIntervals = 0;
  /** Agent intervals received twice (an agent resends its recent ones after a reconnect): dropped. */
  duplicateIntervals = 0;
  /**
   * plan.records.sample_every, or null when agents send every record. Sampled, the window counts
   * come from the agents' tallies (in `final`) and the verdicts from merged histograms; records
   * only feed requests.ndjson, de-duplication and the figures run.json states are over the sample.
   */
  readonly sampleEvery: number | null;
  /** Sampled: the requests of a restarted agent's spool already counted (its process sent no tally). */
  private readonly uploadCounted = new Map<number, Map<string, IndexSet>>();
  private newestSecond = -1;
  /** agent → class → the request indices taken from it (one bit each: index-set.ts). */
  private readonly seen = new Map<number, Map<string, IndexSet>>();
  private readonly requests: AtomicLineStream;
  /** Every raw metric value of every (class, window), for the exact figures (bounded in memory). */
  private readonly exact: ExactStore;
  private readonly hlog: HlogWriter;
  private readonly traffic: TrafficCsvWriter;
  private readonly pending = new Map<number, PendingSecond>();
  private readonly outstanding = new Map<string, number>();
  /** Written seconds → the agents whose interval they contain. */
  private readonly finalSeconds = new Map<number, ReadonlySet<number>>();
  /** Class → the intended times the agents dispatched, by request_index (bits while on the plan). */
  private readonly offered = new Map<string, OfferedArrivals>();

  constructor(
    private readonly plan: Plan,
    private readonly schedule: GlobalSchedule,
    private readonly timebases: readonly AgentTimebase[],
    dir: string,
    startUnixNs: bigint,
    private readonly liveAgents: () => number[],
    private readonly listener?: CollectorListener,
    /** A second is written without the agents still missing once a second this much newer has arrived. */
    private readonly maxLatenessS = 2,
  ) {
    this.requests = new AtomicLineStream(`${dir}/requests.ndjson`);
    this.hlog = new HlogWriter(`${dir}/histograms.hlog`, startUnixNs);
    this.traffic = new TrafficCsvWriter(`${dir}/traffic.csv`);
    this.exact = new ExactStore(`${dir}/exact-values.spill.tmp-${process.pid}`);
    this.sampleEvery = typeof plan.records === 'object' ? plan.records.sample_every : null;
    const allEnd = Number.POSITIVE_INFINITY;
    for (const [i, cls] of plan.classes.entries()) {
      const byWindow = new Map<string, WindowStats>([['all', new WindowStats(0, allEnd, cls.slo, this.exact)]]);
      for (const w of plan.windows ?? [])
        byWindow.set(w.name, new WindowStats(w.start_s * NS_PER_S, w.end_s * NS_PER_S, cls.slo, this.exact));
      this.stats.set(cls.name, byWindow);
      this.shapes.set(cls.name, new ClassShape(cls, expectedShape(plan, cls, schedule.classes[i]!), classApi(cls, plan.target)));
      const sessions = schedule.classes[i]!.sessions;
      if (sessions) this.sessionTurns.set(cls.name, new SessionTurns(sessions, this.exact, cls.prompt.tool_loop === true));
      const adapters = schedule.classes[i]!.adapters;
      if (cls.prompt.tools) this.toolTallies.set(cls.name, new ToolTally(this.exact));
      if (cls.adapters && adapters) {
        const scheduled = schedule.classes[i]!.closedLoop
          ? null
          : cls.adapters.map((_, a) => adapters.perRequest.filter((x) => x === a).length);
        this.loraTallies.set(cls.name, new LoraTally(cls.adapters, scheduled));
      }
    }
  }

  /**
   * One batch of records from agent `agent`; returns how many were new. A request already
   * received (the same class and request_index from the same agent, e.g. re-sent from a spool)
   * is dropped, so every request counts exactly once.
   */
  records(agent: number, rows: readonly RequestRecord[], fromSpool = false): number {
    const tb = this.timebases[agent]!;
    // Sampled: a spool handed over holds every record of an agent that never sent its tally.
    if (this.sampleEvery !== null && fromSpool) this.countFromSpool(agent, rows);
    const seen = getOrCreate(this.seen, agent, () => new Map<string, IndexSet>());
    let added = 0;
    const totals = this.agentTotals.get(agent) ?? { requests: 0, completed: 0, failed: 0 };
    this.agentTotals.set(agent, totals);
    let text = '';
    for (const r of rows) {
      // An agent's indices are striped by the fleet size (index-set.ts): its bits are 1/N of the range.
      if (!getOrCreate(seen, r.class, () => new IndexSet(this.timebases.length)).add(r.request_index)) {
        this.duplicatesDropped++;
        continue;
      }
      added++;
      this.recordsReceived++;
      text += formatRequestRow(r, tb, this.shapes.get(r.class)?.planned(r.request_index) ?? null);
      totals.requests++;
      if (r.status === 'ok') totals.completed++;
      else totals.failed++;
      this.listener?.finished(r);
      this.ttftUncertainty.add(agent, r);
      if (r.done_ns !== null && r.done_ns > this.lastDoneNs) this.lastDoneNs = r.done_ns;
      // The offered schedule needs every request's intended time: with a sample it is not evaluable.
      if (r.intended_ns !== null && this.sampleEvery === null) this.offeredOf(r.class)?.add(r.request_index, r.intended_ns);
      this.shapes.get(r.class)?.add(agent, r);
      this.sessionTurns.get(r.class)?.add(r);
      this.loraTallies.get(r.class)?.add(r);
      this.toolTallies.get(r.class)?.add(r);
      const byWindow = this.stats.get(r.class);
      if (!byWindow || this.sampleEvery !== null) continue; // sampled: counted by the agents
      for (const w of windowsAt(this.plan.windows ?? [], windowTimeNs(r))) byWindow.get(w)?.add(r);
    }
    this.requests.write(text);
    return added;
  }

  // Counts (not raw values: those of the other agents are not here either) each spooled request once.
  private countFromSpool(agent: number, rows: readonly RequestRecord[]): void {
    const counted = getOrCreate(this.uploadCounted, agent, () => new Map<string, IndexSet>());
    for (const r of rows) {
      if (!getOrCreate(counted, r.class, () => new IndexSet(this.timebases.length)).add(r.request_index)) continue;
      const byWindow = this.stats.get(r.class);
      for (const w of windowsAt(this.plan.windows ?? [], windowTimeNs(r))) byWindow?.get(w)?.addCounts(r);
    }
  }

  /** One agent's interval `second`; closes seconds every live agent has now sent. */
  interval(agent: number, second: number, classes: Record<string, IntervalClass>): void {
    const p = this.pending.get(second) ?? { contributors: new Set<number>(), classes: new Map() };
    const written = this.finalSeconds.get(second);
    if (written?.has(agent) || p.contributors.has(agent)) {
      // A resent interval (the agent cannot know whether a frame sent as its link died arrived).
      this.duplicateIntervals++;
      return;
    }
    if (written) {
      // Its records and run histograms still count; the interval files keep one row per second.
      this.lateIntervals++;
      return;
    }
    this.pending.set(second, p);
    this.addTo(p, agent, classes);
    if (second > this.newestSecond) this.newestSecond = second;
    this.closeReadySeconds();
  }

  /** An agent left the live set (lost, or its final is in): seconds that waited only for it can close now. */
  agentGone(): void {
    this.live = null;
    this.closeReadySeconds();
  }

  // The live agents, asked for once per change of the live set (agentGone), not once per interval:
  // building the list is O(agents), and at 10,000 agents × one interval each per second that was
  // 10^8 steps a second. The live set only shrinks during a run.
  private live: number[] | null = null;

  private liveNow(): number[] {
    this.live ??= this.liveAgents();
    return this.live;
  }

  /**
   * One agent's run histograms (class → window → metric → encoded) and, with sampled records, its
   * tally of every request it finished (class → window → counts).
   */
  final(agent: number, windows: Record<string, Record<string, Record<string, string>>>, tally?: TalliesData): void {
    for (const [cls, byWindow] of Object.entries(windows)) {
      for (const [w, metrics] of Object.entries(byWindow)) {
        for (const [m, encoded] of Object.entries(metrics)) addEncoded(this.mergedHistogram(cls, w, m), encoded);
      }
    }
    if (this.sampleEvery === null || !tally) return;
    const totals = { requests: 0, completed: 0, failed: 0 };
    for (const [cls, byWindow] of Object.entries(tally)) {
      for (const [w, d] of Object.entries(byWindow)) this.stats.get(cls)?.get(w)?.addData(d);
      const all = byWindow.all;
      if (!all) continue;
      totals.requests += all.requests;
      totals.completed += all.completed;
      totals.failed += all.failed;
      if (all.lastDoneNs > this.lastDoneNs) this.lastDoneNs = all.lastDoneNs;
    }
    // The agent's own counts of its share replace the sample's.
    this.agentTotals.set(agent, totals);
  }

  /** The merged run histogram of (class, window, metric), created empty if none arrived. */
  mergedHistogram(cls: string, window: string, metric: string): Histogram {
    const byWindow = getOrCreate(this.merged, cls, () => new Map<string, Map<string, Histogram>>());
    return getOrCreate(
      getOrCreate(byWindow, window, () => new Map<string, Histogram>()),
      metric,
      newHistogram,
    );
  }

  /**
   * The open-loop arrivals the agents dispatched to class `cls`, in request_index order, as
   * offsets from the start (aligned, so they are comparable with the global schedule); undefined
   * when none carried an intended time.
   */
  offeredArrivals(cls: string): OfferedArrivals | undefined {
    return this.offered.get(cls);
  }

  private offeredOf(cls: string): OfferedArrivals | undefined {
    const planned = this.schedule.classes.find((c) => c.className === cls)?.arrivalsNs;
    return planned && getOrCreate(this.offered, cls, () => new OfferedArrivals(planned));
  }

  /** Closes every remaining second and the interval and request files; computes the exact figures of every window. */
  async close(): Promise<void> {
    for (const second of [...this.pending.keys()].sort((a, b) => a - b)) this.closeSecond(second);
    await Promise.all([this.requests.close(), this.hlog.close(), this.traffic.close()]);
    const summaries = await this.exact.summaries();
    for (const byWindow of this.stats.values()) for (const w of byWindow.values()) w.setExact(summaries);
    if (this.sampleEvery !== null) this.verdictsFromHistograms();
    for (const t of [...this.sessionTurns.values(), ...this.toolTallies.values()]) t.setExact(summaries);
  }

  // Sampled: each verdict's p95 over every request, from the merged histograms and the tallies' failures.
  private verdictsFromHistograms(): void {
    for (const [cls, byWindow] of this.stats)
      for (const [w, stats] of byWindow)
        for (const m of stats.verdictMetrics()) {
          const s = histogramRankSummary(this.mergedHistogram(cls, w, m), stats.failed);
          if (s) stats.verdictExact.set(m, s);
        }
  }

  /** How the exact figures were computed (after close). */
  exactMethod(): ExactMethod {
    return this.exact.method();
  }

  private addTo(p: PendingSecond, agent: number, classes: Record<string, IntervalClass>): void {
    p.contributors.add(agent);
    for (const [cls, iv] of Object.entries(classes)) {
      const c = getOrCreate(p.classes, cls, () => ({ issued: 0, completed: 0, failed: 0, histograms: new Map<string, Histogram>() }));
      c.issued += iv.issued;
      c.completed += iv.completed;
      c.failed += iv.failed;
      for (const [m, encoded] of Object.entries(iv.histograms)) {
        addEncoded(getOrCreate(c.histograms, m, newHistogram), encoded);
      }
    }
  }

  private closeReadySeconds(): void {
    const live = this.liveNow();
    for (const second of [...this.pending.keys()].sort((a, b) => a - b)) {
      const p = this.pending.get(second)!;
      const tooOld = this.newestSecond - second > this.maxLatenessS;
      // Fewer contributors than live agents cannot hold them all: that answers without a scan
      // (a scan per interval is O(agents), O(agents²) a second).
      if (!tooOld && (p.contributors.size < live.length || !live.every((a) => p.contributors.has(a)))) break;
      this.closeSecond(second);
    }
  }

  private closeSecond(second: number): void {
    const p = this.pending.get(second);
    if (!p) return;
    this.pending.delete(second);
    this.finalSeconds.set(second, p.contributors);
    this.intervalContributors.push({ second, agents: [...p.contributors].sort((a, b) => a - b) });
    this.writeSecond(second, p);
  }

  private writeSecond(second: number, p: PendingSecond): void {
    this.plan.classes.forEach((cls, i) => {
      const c = p.classes.get(cls.name);
      const issued = c?.issued ?? 0;
      const done = (c?.completed ?? 0) + (c?.failed ?? 0);
      this.listener?.second(
        second,
        cls.name,
        { issued, completed: c?.completed ?? 0, failed: c?.failed ?? 0 },
        c?.histograms ?? NO_HISTOGRAMS,
      );
      for (const [m, h] of c?.histograms ?? []) this.hlog.interval(`${cls.name}/${m}`, second, 1, h);
      const outstanding = (this.outstanding.get(cls.name) ?? 0) + issued - done;
      this.outstanding.set(cls.name, outstanding);
      const sched = this.schedule.classes[i]!;
      const lag = c?.histograms.get('schedule_lag');
      this.traffic.row({
        elapsed_s: second,
        class: cls.name,
        target_rate_per_s: sched.closedLoop ? null : arrivalsBetween(sched.arrivalsNs, second * NS_PER_S, (second + 1) * NS_PER_S),
        target_concurrency: sched.closedLoop ? concurrencyAt(sched.concurrency, (second + 0.5) * NS_PER_S) : null,
        issued,
        completed: done,
        outstanding,
        schedule_lag_p99_ms: lag && lag.totalCount > 0 ? nsToMs(percentilesNs(lag, [0.99])[0]!) : null,
      });
    });
  }
}
