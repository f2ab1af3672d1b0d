// A time series of one process's CPU and memory, read from /proc while it runs, so a suite can
// ask afterwards what the process used between two wall-clock instants (e.g. the steady part of
// a run, without start-up and drain).
import { machineCpuMs, mainThreadCpuMs, processCpuMs, rssKib } from './proc.js';

/** One reading. */
export interface ProcSample {
  unixMs: number;
  cpuMs: number;
  mainThreadCpuMs: number;
  rssKib: number;
  /** Busy CPU time of the whole machine (all cores), to tell a busy client from a crowded machine. */
  machineBusyMs: number;
  machineStealMs: number;
}

/** Collects readings of the first pid it is given (the one agent of a run). */
export class ProcSampler {
  readonly samples: ProcSample[] = [];
  pid: number | undefined;

  /** Takes a reading of `pid` (the first pid it sees sticks); returns it, or null if it has gone. */
  sample(pids: readonly number[]): ProcSample | null {
    this.pid ??= pids[0];
    if (this.pid === undefined) return null;
    const cpu = processCpuMs(this.pid);
    const main = mainThreadCpuMs(this.pid);
    const rss = rssKib(this.pid);
    if (cpu === null || main === null || rss === null) return null;
    const m = machineCpuMs();
    const s = { unixMs: Date.now(), cpuMs: cpu, mainThreadCpuMs: main, rssKib: rss, machineBusyMs: m.busyMs, machineStealMs: m.stealMs };
    this.samples.push(s);
    return s;
  }

  /** The readings that bracket [fromMs, toMs] most tightly from inside, or null with fewer than two. */
  between(fromMs: number, toMs: number): { first: ProcSample; last: ProcSample } | null {
    const inside = this.samples.filter((s) => s.unixMs >= fromMs && s.unixMs <= toMs);
    if (inside.length < 2) return null;
    return { first: inside[0]!, last: inside[inside.length - 1]! };
  }

  /** Share of one core the main thread (for Node: the event loop) was busy in [fromMs, toMs]. */
  mainThreadUtilisation(fromMs: number, toMs: number): number | null {
    return this.rate(fromMs, toMs, 'mainThreadCpuMs');
  }

  /** Share of one core the whole process used in [fromMs, toMs]. */
  processUtilisation(fromMs: number, toMs: number): number | null {
    return this.rate(fromMs, toMs, 'cpuMs');
  }

  /** Cores the whole machine kept busy in [fromMs, toMs] (every process, kernel included). */
  machineBusyCores(fromMs: number, toMs: number): number | null {
    return this.rate(fromMs, toMs, 'machineBusyMs');
  }

  private rate(fromMs: number, toMs: number, field: 'cpuMs' | 'mainThreadCpuMs' | 'machineBusyMs'): number | null {
    const b = this.between(fromMs, toMs);
    if (!b) return null;
    return round3((b.last[field] - b.first[field]) / (b.last.unixMs - b.first.unixMs));
  }
}

/** Rounds to 3 decimals (the figures' precision). */
export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
