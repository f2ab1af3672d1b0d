// The live progress line: once a second, per class, what was sent, is in flight, succeeded and
// failed, and the p95 TTFT so far from the merged interval histograms. It only reads the
// collector; it never changes what is measured.
import { nsToMs, percentilesNs } from '../shared/histogram.js';
import type { Plan } from '../shared/plan.js';
import type { Collector } from './collector.js';

/** Prints one progress line per second while a run is live. */
export class ProgressView {
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();

  constructor(
    private readonly plan: Plan,
    private readonly collector: Collector,
    private readonly print: (line: string) => void,
  ) {}

  /** Starts printing. */
  start(): void {
    this.timer = setInterval(() => this.print(this.line()), 1000);
  }

  /** Stops printing. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The current line, e.g. `t=12s realtime sent 96 inflight 3 ok 92 err 1 p95_ttft 61.2ms | batch …`. */
  line(): string {
    const parts = this.plan.classes.map((cls) => {
      const l = this.collector.live.get(cls.name)!;
      const p95 = l.ttft.totalCount > 0 ? `${nsToMs(percentilesNs(l.ttft, [0.95])[0]!).toFixed(1)}ms` : '-';
      const inflight = l.issued - l.completed - l.failed;
      return `${cls.name} sent ${l.issued} inflight ${inflight} ok ${l.completed} err ${l.failed} p95_ttft ${p95}`;
    });
    return `t=${Math.round((Date.now() - this.startedAt) / 1000)}s ${parts.join(' | ')}`;
  }
}
