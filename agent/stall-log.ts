// The agent's own account of its stalls: a light timer (every 50 ms) notes each time it fired more
// than STALL_MS late, with the second of the run and what the process did meanwhile, so the
// coordinator can say why a late send or an unread first token happened, not only when:
//   gc       a garbage collection took at least half of the gap;
//   busy     the process was on a CPU for at least half of it (its own work kept the loop busy);
//   no_cpu   it was not: it waited for a CPU (a busy host) or was paused.
// The CPU figure is process-wide (worker threads included), so with --workers a busy worker can
// read as `busy` for the main thread's stall.
import { PerformanceObserver, performance } from 'node:perf_hooks';
import type { AgentStall } from '../shared/protocol.js';

/** A timer this late (ms) is a stall. */
export const STALL_MS = 50;
/** The timer's period (ms). */
const PERIOD_MS = 50;
/** Stalls kept: the longest ones. */
export const STALLS_KEPT = 20;

/** Keeps the longest stalls of one run. */
export class StallLog {
  private timer: NodeJS.Timeout | undefined;
  private observer: PerformanceObserver | undefined;
  private readonly gcs: { start: number; end: number }[] = [];
  private stalls: AgentStall[] = [];

  /** `runSecond()` gives the current second of the run (from its start instant). */
  start(runSecond: () => number): void {
    this.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) this.gcs.push({ start: e.startTime, end: e.startTime + e.duration });
      if (this.gcs.length > 256) this.gcs.splice(0, this.gcs.length - 256);
    });
    this.observer.observe({ entryTypes: ['gc'] });
    let last = performance.now();
    let cpu = process.cpuUsage();
    this.timer = setInterval(() => {
      const now = performance.now();
      const gapMs = now - last;
      const lateMs = gapMs - PERIOD_MS;
      // One reading a tick, the next tick's base too (20 a second: each is a system call).
      const cpuNow = process.cpuUsage();
      const usedMs = (cpuNow.user - cpu.user + cpuNow.system - cpu.system) / 1000;
      if (lateMs > STALL_MS) this.note(runSecond(), lateMs, gapMs, usedMs, this.gcWithin(last, now));
      last = now;
      cpu = cpuNow;
    }, PERIOD_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.observer?.disconnect();
  }

  /** The longest stalls so far, by second. */
  list(): AgentStall[] {
    return [...this.stalls].sort((a, b) => a.second - b.second);
  }

  private note(second: number, lateMs: number, gapMs: number, cpuMs: number, gcMs: number): void {
    const cause: AgentStall['cause'] = gcMs >= gapMs / 2 ? 'gc' : cpuMs >= gapMs / 2 ? 'busy' : 'no_cpu';
    this.stalls.push({ second, ms: round1(lateMs), cause, cpu_ms: round1(cpuMs), gc_ms: round1(gcMs) });
    if (this.stalls.length > STALLS_KEPT) {
      this.stalls.sort((a, b) => b.ms - a.ms);
      this.stalls.length = STALLS_KEPT;
    }
  }

  private gcWithin(from: number, to: number): number {
    let ms = 0;
    for (const g of this.gcs) ms += Math.max(0, Math.min(to, g.end) - Math.max(from, g.start));
    return ms;
  }
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
