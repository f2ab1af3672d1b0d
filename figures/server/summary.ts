// What the end of the run needs from the scrapes, kept as they arrive so memory stays bounded for
// any run length: each good scrape is reduced at once to the few numbers the server
// block reads (derive.ts's readers), and folded into per-window running state — per source the
// latest gauge value and the first/last counter value, maxima, distinct process start times — in
// the same time order serverBlock() sorts the kept records into, so the figures are the same to
// the byte. Per source it keeps the counts, the first errors and the tick lags and durations (the
// exact p99 needs them: 16 bytes a tick). A scrape's series and text are dropped after its reduce,
// except each source's latest good series for the live view.
import { nearestRank } from '../../shared/histogram.js';
import { getOrCreate } from '../../shared/maps.js';
import type { Plan } from '../../shared/plan.js';

type PlanWindow = NonNullable<Plan['windows']>[number];

import { type ClassFairness, cacheAndSpecRates, maxSeriesIn, type Sample, type ServerFigures, valueIn } from './derive.js';
import {
  EPP_POOL_SATURATION,
  EPP_QUEUE_DURATION,
  EPP_QUEUE_SIZE,
  PROCESS_START,
  VLLM_KV_USAGE,
  VLLM_PREEMPTIONS,
  VLLM_PREFIX_HITS,
  VLLM_PREFIX_QUERIES,
  VLLM_RUNNING,
  VLLM_SPEC_ACCEPTED,
  VLLM_SPEC_DRAFT_TOKENS,
  VLLM_SPEC_DRAFTS,
  VLLM_WAITING,
} from './names.js';
import type { PromSample } from './prom-parse.js';
import { classFairness, serverDefinitions } from './server-block.js';
import type { ScrapeRecord } from './types.js';

// Positions in a reduced sample's value vector; per class two more (count, sum) follow.
const RUNNING = 0;
const WAITING = 1;
const KV = 2;
const PREEMPT = 3;
const PREFIX_Q = 4;
const PREFIX_H = 5;
const EPP_Q = 6;
const SAT = 7;
const Q_COUNT = 8;
const Q_SUM = 9;
const SPEC_DRAFTS = 10;
const SPEC_DRAFT_TOKENS = 11;
const SPEC_ACCEPTED = 12;
const FIXED = 13;
const GAUGES = [RUNNING, WAITING, KV, EPP_Q];
const FAIRNESS_NAMES = new Set([...EPP_QUEUE_SIZE, ...EPP_QUEUE_DURATION.flatMap((n) => [`${n}_count`, `${n}_sum`, `${n}_bucket`])]);

/** One good scrape reduced to what the derivations read; held only until it can be placed in time order. */
interface Reduced {
  source: string;
  sourceIdx: number;
  seq: number;
  startNs: bigint;
  tick: boolean;
  values: (number | null)[];
  gateway: boolean;
  processStart: number | null;
  /** (fairness_id, priority) pairs of the flow-control series, first occurrence order. */
  fairness: [string, string | undefined][];
}

/** Reduces one good scrape (the readers are those of deriveFigures, gatewaySources, restartsBySource). */
function reduce(sample: Sample, classes: readonly ClassFairness[]): Omit<Reduced, 'sourceIdx' | 'seq' | 'startNs' | 'tick'> {
  const values: (number | null)[] = [
    valueIn(sample, VLLM_RUNNING),
    valueIn(sample, VLLM_WAITING),
    valueIn(sample, VLLM_KV_USAGE),
    valueIn(sample, VLLM_PREEMPTIONS),
    valueIn(sample, VLLM_PREFIX_QUERIES),
    valueIn(sample, VLLM_PREFIX_HITS),
    valueIn(sample, EPP_QUEUE_SIZE),
    maxSeriesIn(sample, EPP_POOL_SATURATION),
    valueIn(sample, EPP_QUEUE_DURATION, '_count'),
    valueIn(sample, EPP_QUEUE_DURATION, '_sum'),
    valueIn(sample, VLLM_SPEC_DRAFTS),
    valueIn(sample, VLLM_SPEC_DRAFT_TOKENS),
    valueIn(sample, VLLM_SPEC_ACCEPTED),
  ];
  for (const c of classes) {
    if (c.fairnessId === null) values.push(null, null);
    else {
      const mine = (l: Record<string, string>) => l.fairness_id === c.fairnessId;
      values.push(valueIn(sample, EPP_QUEUE_DURATION, '_count', mine), valueIn(sample, EPP_QUEUE_DURATION, '_sum', mine));
    }
  }
  const fairness: [string, string | undefined][] = [];
  const seen = new Set<string>();
  for (const x of sample.series) {
    if (!FAIRNESS_NAMES.has(x.name) || x.labels.fairness_id === undefined) continue;
    const key = `${x.labels.fairness_id}\u0000${x.labels.priority ?? '\u0001'}`;
    if (seen.has(key)) continue;
    seen.add(key);
    fairness.push([x.labels.fairness_id, x.labels.priority]);
  }
  return {
    source: sample.source,
    values,
    gateway: valueIn(sample, EPP_POOL_SATURATION) !== null || valueIn(sample, EPP_QUEUE_SIZE) !== null,
    processStart: maxSeriesIn(sample, PROCESS_START),
    fairness,
  };
}

/** deriveFigures() of one window, folded sample by sample (fed in time order). */
class WindowState {
  private readonly latest = GAUGES.map(() => new Map<string, number>());
  private readonly maxSum: (number | null)[] = GAUGES.map(() => null);
  private saturation: number | null = null;
  private readonly firstLast: Map<string, [number, number]>[];
  private readonly gateways = new Set<string>();
  readonly starts = new Map<string, Set<number>>();

  constructor(private readonly classes: readonly ClassFairness[]) {
    this.firstLast = Array.from({ length: FIXED + 2 * classes.length }, () => new Map());
  }

  add(r: Reduced): void {
    GAUGES.forEach((at, i) => {
      const v = r.values[at]!;
      if (v === null) return;
      // As maxOfSums: each source's latest value carried forward, summed in first-seen order.
      const latest = this.latest[i]!;
      latest.set(r.source, v);
      let total = 0;
      for (const x of latest.values()) total += x;
      const m = this.maxSum[i]!;
      this.maxSum[i] = m === null ? total : Math.max(m, total);
    });
    const sat = r.values[SAT]!;
    if (sat !== null) this.saturation = Math.max(this.saturation ?? sat, sat);
    for (let at = 0; at < r.values.length; at++) {
      if (GAUGES.includes(at) || at === SAT) continue;
      const v = r.values[at]!;
      if (v === null) continue;
      const fl = this.firstLast[at]!.get(r.source);
      if (fl) fl[1] = v;
      else this.firstLast[at]!.set(r.source, [v, v]);
    }
    if (r.gateway) this.gateways.add(r.source);
    if (r.processStart !== null) getOrCreate(this.starts, r.source, () => new Set<number>()).add(r.processStart);
  }

  private delta(at: number): number | null {
    const m = this.firstLast[at]!;
    if (m.size === 0) return null;
    let total = 0;
    for (const [first, last] of m.values()) total += Math.max(0, last - first);
    return total;
  }

  figures(): ServerFigures {
    const kv = this.maxSum[2]!;
    const queueCount = this.delta(Q_COUNT);
    const queueSeconds = this.delta(Q_SUM);
    const out: ServerFigures = {
      max_vllm_running: this.maxSum[0]!,
      max_vllm_waiting: this.maxSum[1]!,
      max_vllm_kv_cache_usage_pct: kv === null ? null : round3(kv * 100),
      vllm_preemptions_delta: this.delta(PREEMPT),
      vllm_prefix_cache_queries_delta: this.delta(PREFIX_Q),
      vllm_prefix_cache_hits_delta: this.delta(PREFIX_H),
      vllm_spec_decode_drafts_delta: this.delta(SPEC_DRAFTS),
      vllm_spec_decode_draft_tokens_delta: this.delta(SPEC_DRAFT_TOKENS),
      vllm_spec_decode_accepted_tokens_delta: this.delta(SPEC_ACCEPTED),
      max_epp_queue: this.maxSum[3]!,
      max_pool_saturation: this.saturation,
      epp_queue_count_delta: queueCount,
      epp_queue_seconds_delta: queueSeconds === null ? null : round6(queueSeconds),
    };
    Object.assign(out, cacheAndSpecRates(out));
    this.classes.forEach((cls, i) => {
      if (cls.fairnessId === null) {
        out[`${cls.name}_epp_queue_mean_ms`] = null;
        return;
      }
      const count = this.delta(FIXED + 2 * i);
      const sum = this.delta(FIXED + 2 * i + 1);
      out[`${cls.name}_epp_queue_mean_ms`] = count === null || sum === null || count === 0 ? null : round3((sum / count) * 1000);
    });
    const saturation = this.saturation;
    out.flow_control_materially_engaged =
      queueCount === null || queueSeconds === null || saturation === null ? null : queueCount > 0 && queueSeconds > 0 && saturation >= 1;
    out.gateway_restarts =
      this.gateways.size === 0 ? null : [...this.gateways].reduce((n, g) => n + ((this.starts.get(g)?.size ?? 1) - 1), 0);
    return out;
  }
}

/** A growable Float64Array: 8 bytes a value instead of a boxed array slot. */
class Floats {
  private data = new Float64Array(64);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort();
  }
}

/** Per-source capture health, as sourceSummary() counts it. */
interface SourceTally {
  name: string;
  url: string;
  intervalS: number;
  skippedTicks: number;
  ticks: number;
  ticksOk: number;
  errors: number;
  errorCounts: Record<string, number>;
  firstErrors: { kind: ScrapeRecord['kind']; tick: number | null; startNs: bigint; error: NonNullable<ScrapeRecord['error']> }[];
  pre: string | null;
  post: string | null;
  lags: Floats;
  durations: Floats;
  /** The latest good scrape's series, for the live view (one scrape's worth per source). */
  latest: readonly PromSample[] | null;
  seq: number;
  /** When this source's scrape in flight began (coordinator clock), or null. */
  inFlightNs: bigint | null;
}

/** The scrapes of a run, kept in bounded form; block() is serverBlock() of the same scrapes. */
export class ScrapeSummary {
  private readonly classes: ClassFairness[];
  private readonly windows: PlanWindow[];
  private readonly all: WindowState;
  private readonly perWindow: WindowState[];
  private readonly tallies: SourceTally[];
  private readonly priorities = new Map<string, Set<string>>();
  private pending: Reduced[] = [];
  private runStartNs: bigint | null = null;

  constructor(plan: Plan | null, sources: readonly { name: string; url: string; intervalS: number }[]) {
    this.classes = plan === null ? [] : classFairness(plan);
    this.windows = plan?.windows ?? [];
    this.all = new WindowState(this.classes);
    this.perWindow = this.windows.map(() => new WindowState(this.classes));
    this.tallies = sources.map((s) => ({
      ...s,
      skippedTicks: 0,
      ticks: 0,
      ticksOk: 0,
      errors: 0,
      errorCounts: {},
      firstErrors: [],
      pre: null,
      post: null,
      lags: new Floats(),
      durations: new Floats(),
      latest: null,
      seq: 0,
      inFlightNs: null,
    }));
  }

  /** The instant elapsed_s counts from (coordinator clock); samples wait for it. */
  setRunStart(runStartNs: bigint): void {
    this.runStartNs = runStartNs;
    this.release();
  }

  /** A scrape of source `i` began at `startNs` (coordinator clock): nothing later is placed before it. */
  begin(i: number, startNs: bigint): void {
    this.tallies[i]!.inFlightNs = startNs;
  }

  /** Ticks of source `i` skipped. */
  skipped(i: number, n: number): void {
    this.tallies[i]!.skippedTicks += n;
  }

  /** One finished scrape of source `i`, begun at `startNs` (coordinator clock); its series are not kept. */
  add(i: number, r: ScrapeRecord, startNs: bigint): void {
    const t = this.tallies[i]!;
    t.inFlightNs = null;
    if (r.kind === 'tick') {
      t.ticks++;
      if (r.error === null) t.ticksOk++;
      t.lags.push(r.lagMs ?? 0);
      t.durations.push(r.durationMs);
    }
    if (r.error !== null) {
      t.errors++;
      t.errorCounts[r.error.kind] = (t.errorCounts[r.error.kind] ?? 0) + 1;
      if (t.firstErrors.length < 5) t.firstErrors.push({ kind: r.kind, tick: r.tick, startNs, error: r.error });
    }
    if (r.kind !== 'tick') {
      const status = r.error === null ? 'ok' : `${r.error.kind}: ${r.error.message}`;
      if (r.kind === 'pre') t.pre ??= status;
      else t.post ??= status;
    }
    if (r.series !== null) {
      t.latest = r.series;
      const sample = { source: r.source, elapsedS: 0, series: r.series, families: r.families };
      this.pending.push({ ...reduce(sample, this.classes), sourceIdx: i, seq: t.seq++, startNs, tick: r.kind === 'tick' });
    }
    this.release();
  }

  /** Each source's latest good series, in the shape the live view reads. */
  liveSources(): { records: { series: readonly PromSample[] }[] }[] {
    return this.tallies.map((t) => ({ records: t.latest === null ? [] : [{ series: t.latest }] }));
  }

  /** run.json's `server` block (serverBlock() of the same scrapes). */
  block(): { sources: Record<string, unknown>[]; windows: Record<string, unknown>; definitions: Record<string, string> } {
    this.release(true);
    const windows: Record<string, unknown> = { all: this.all.figures() };
    this.windows.forEach((w, i) => {
      windows[w.name] = this.perWindow[i]!.figures();
    });
    return { sources: this.tallies.map((t) => this.sourceSummary(t)), windows, definitions: serverDefinitions(this.classes) };
  }

  /** fairness_id → priorities seen on the gateway's flow-control series (derive.ts fairnessPriorities over every good scrape). */
  fairnessPriorities(): Map<string, Set<string>> {
    this.release(true);
    return this.priorities;
  }

  private elapsedS(startNs: bigint): number {
    return this.runStartNs === null ? 0 : Number(startNs - this.runStartNs) / 1e9;
  }

  // Folds the pending samples that no scrape still in flight can precede, in serverBlock's order:
  // by elapsed time, then source, then arrival. Before the run start is known, nothing is placed.
  private release(all = false): void {
    if (this.pending.length === 0 || (this.runStartNs === null && !all)) return;
    let horizon: bigint | null = null;
    if (!all)
      for (const t of this.tallies) if (t.inFlightNs !== null && (horizon === null || t.inFlightNs < horizon)) horizon = t.inFlightNs;
    const ready = horizon === null ? this.pending : this.pending.filter((r) => r.startNs < horizon);
    if (ready.length === 0) return;
    this.pending = horizon === null ? [] : this.pending.filter((r) => r.startNs >= horizon);
    const keyed = ready.map((r) => ({ r, t: this.elapsedS(r.startNs) }));
    keyed.sort((a, b) => a.t - b.t || a.r.sourceIdx - b.r.sourceIdx || a.r.seq - b.r.seq);
    for (const { r, t } of keyed) {
      this.all.add(r);
      if (r.tick)
        this.windows.forEach((w, i) => {
          if (t >= w.start_s && t <= w.end_s) this.perWindow[i]!.add(r);
        });
      for (const [id, priority] of r.fairness) {
        const set = getOrCreate(this.priorities, id, () => new Set<string>());
        if (priority !== undefined) set.add(priority);
      }
    }
  }

  private sourceSummary(t: SourceTally): Record<string, unknown> {
    const lags = t.lags.sorted();
    const durations = t.durations.sorted();
    const starts = this.all.starts.get(t.name);
    return {
      name: t.name,
      url: t.url,
      interval_s: t.intervalS,
      ticks_due: t.ticks + t.skippedTicks,
      scrapes: t.ticks,
      samples_ok: t.ticksOk,
      errors: t.errors,
      error_counts: t.errorCounts,
      first_errors: t.firstErrors.map((e) => ({ scrape: e.kind, tick: e.tick, elapsed_s: round3(this.elapsedS(e.startNs)), ...e.error })),
      skipped_ticks: t.skippedTicks,
      pre_snapshot: t.pre ?? 'missing',
      post_snapshot: t.post ?? 'missing',
      lag_p99_ms: lags.length > 0 ? round3(nearestRank(lags, 0.99)) : null,
      lag_max_ms: lags.length > 0 ? round3(lags[lags.length - 1]!) : null,
      duration_p99_ms: durations.length > 0 ? round3(nearestRank(durations, 0.99)) : null,
      duration_max_ms: durations.length > 0 ? round3(durations[durations.length - 1]!) : null,
      restarts: starts === undefined ? null : starts.size - 1,
    };
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
