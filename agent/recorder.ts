// The agent's measurements: per (class, window, metric) run histograms sent once at the end,
// and per-second interval histograms and counts streamed as each second closes. Time comes from
// an injected clock (ns from the run start), so tests can drive it.

import type { Histogram } from '../shared/histogram.js';
import { encodeHistogram, newHistogram, recordNs } from '../shared/histogram.js';
import { getOrCreate } from '../shared/maps.js';
import type { LatencyMetric, RequestRecord } from '../shared/metrics.js';
import { LATENCY_METRICS, metricNs, windowsAt, windowTimeNs } from '../shared/metrics.js';
import type { Window } from '../shared/plan.js';
import type { IntervalClass } from '../shared/protocol.js';
import { loopBusy } from './loop-busy.js';

type MetricHistograms = Map<LatencyMetric, Histogram>;

interface IntervalState {
  issued: number;
  completed: number;
  failed: number;
  histograms: MetricHistograms;
}

const NS_PER_S = 1_000_000_000;
const RECORDED = LATENCY_METRICS.filter((m): m is Exclude<LatencyMetric, 'itl'> => m !== 'itl');

/** Records requests into histograms and hands out closed intervals. */
export class Recorder {
  private readonly run = new Map<string, Map<string, MetricHistograms>>();
  private readonly intervals = new Map<string, IntervalState>();
  private openSecond = 0;
  /** Histograms reset after encoding, reused so no interval allocates ~270 KB per metric. */
  private readonly pool: Histogram[] = [];
  /** Interval encodes run one after another, each in its own event-loop turn. */
  private encoding: Promise<void> = Promise.resolve();

  constructor(
    private readonly windows: readonly Window[],
    private readonly nowNs: () => number,
    private readonly onInterval: (second: number, classes: Record<string, IntervalClass>) => void,
  ) {}

  /** Counts a request as issued in the current second and records its schedule lag there. */
  issued(className: string, scheduleLagNs: number | null): void {
    this.rotate();
    const iv = this.interval(className);
    iv.issued++;
    if (scheduleLagNs !== null) recordNs(histogram(iv.histograms, 'schedule_lag', this.pool), scheduleLagNs);
  }

  /** Records a finished request (its record and ITL gaps) into run and interval histograms. */
  finished(r: RequestRecord, gapsNs: ArrayLike<number>): void {
    this.rotate();
    const iv = this.interval(r.class);
    if (r.status === 'ok') iv.completed++;
    else iv.failed++;
    const targets = windowsAt(this.windows, windowTimeNs(r)).map((w) => this.runHistograms(r.class, w));
    targets.push(iv.histograms);
    for (const metric of RECORDED) {
      const v = metricNs(r, metric);
      if (v === null) continue;
      for (const t of targets) {
        // Interval schedule lag was recorded at send time, in the second the request went out.
        if (metric !== 'schedule_lag' || t !== iv.histograms) recordNs(histogram(t, metric, this.pool), v);
      }
    }
    if (gapsNs.length > 0) {
      for (const t of targets) {
        const h = histogram(t, 'itl', this.pool);
        for (let i = 0; i < gapsNs.length; i++) recordNs(h, gapsNs[i]!);
      }
    }
  }

  /** Closes every second that has fully passed, emitting each (empty ones included). */
  rotate(): void {
    const current = Math.floor(this.nowNs() / NS_PER_S);
    while (this.openSecond < current) this.flush(this.openSecond++);
  }

  /** Emits the open second too (at the end of the run). */
  flushAll(): void {
    this.rotate();
    this.flush(this.openSecond++);
  }

  /** The run histograms encoded: class → window → metric → base64. */
  encodeRun(): Record<string, Record<string, Record<string, string>>> {
    const out: Record<string, Record<string, Record<string, string>>> = {};
    for (const [cls, windows] of this.run) {
      out[cls] = {};
      for (const [w, hs] of windows) out[cls][w] = encodeAll(hs);
    }
    return out;
  }

  /** Resolves when every closed interval has been encoded and handed over. */
  drained(): Promise<void> {
    return this.encoding;
  }

  // Swaps in fresh histograms at once (so new records land in the next second), then encodes
  // the closed ones one per event-loop turn: an encode costs ~0.4 ms, and two dozen of them in
  // one turn would show up as schedule lag on the requests due meanwhile. Each waits for a timer,
  // not setImmediate, so the loop may wait for I/O between them: a chain of immediates never
  // lets it, and every stamp taken during the chain would carry the whole chain as its bound.
  private flush(second: number): void {
    const closed: { cls: string; counts: Omit<IntervalClass, 'histograms'>; histograms: MetricHistograms }[] = [];
    for (const [cls, iv] of this.intervals) {
      closed.push({ cls, counts: { issued: iv.issued, completed: iv.completed, failed: iv.failed }, histograms: iv.histograms });
      iv.issued = iv.completed = iv.failed = 0;
      iv.histograms = new Map();
    }
    this.encoding = this.encoding.then(async () => {
      const classes: Record<string, IntervalClass> = {};
      for (const c of closed) {
        const histograms: Record<string, string> = {};
        for (const [m, h] of c.histograms) {
          if (h.totalCount > 0) {
            await new Promise<void>((r) => setTimeout(r, 0));
            histograms[m] = encodeHistogram(h);
            loopBusy.settle(); // an encode is no stamp's delay (loop-busy.ts)
          }
          h.reset();
          this.pool.push(h);
        }
        classes[c.cls] = { ...c.counts, histograms };
      }
      this.onInterval(second, classes);
    });
  }

  private interval(cls: string): IntervalState {
    return getOrCreate(this.intervals, cls, () => ({ issued: 0, completed: 0, failed: 0, histograms: new Map() }));
  }

  private runHistograms(cls: string, window: string): MetricHistograms {
    return getOrCreate(
      getOrCreate(this.run, cls, () => new Map<string, MetricHistograms>()),
      window,
      () => new Map(),
    );
  }
}

function histogram(hs: MetricHistograms, metric: LatencyMetric, pool: Histogram[]): Histogram {
  return getOrCreate(hs, metric, () => pool.pop() ?? newHistogram());
}

function encodeAll(hs: MetricHistograms): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [m, h] of hs) if (h.totalCount > 0) out[m] = encodeHistogram(h);
  return out;
}
