// A process's resident memory over time, for the soak's "coordinator memory flat" check: VmRSS
// read from /proc/<pid>/status once a second (Linux), and a line fitted over a stretch of it.
import { readFileSync } from 'node:fs';

/** One reading: ms since sampling began, resident set in KiB. */
export interface RssSample {
  ms: number;
  kib: number;
}

/** Samples `pid`'s VmRSS every `everyMs` until stop() (or until the process is gone). */
export function sampleRss(pid: number, everyMs = 1000): { samples: RssSample[]; stop(): void; nowMs(): number } {
  const samples: RssSample[] = [];
  const t0 = Date.now();
  const read = (): void => {
    try {
      const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) samples.push({ ms: Date.now() - t0, kib: Number(m[1]) });
    } catch {
      clearInterval(timer); // the process is gone
    }
  };
  read();
  const timer = setInterval(read, everyMs);
  return { samples, stop: () => clearInterval(timer), nowMs: () => Date.now() - t0 };
}

/** A least-squares line through the samples in [fromMs, toMs]: slope in KiB per second, and the growth it implies over that stretch. */
export function rssTrend(
  samples: readonly RssSample[],
  fromMs: number,
  toMs: number,
): { samples: number; kibPerS: number; growthKib: number } {
  const xs = samples.filter((s) => s.ms >= fromMs && s.ms <= toMs);
  if (xs.length < 3) return { samples: xs.length, kibPerS: Number.NaN, growthKib: Number.NaN };
  const mx = xs.reduce((a, s) => a + s.ms, 0) / xs.length;
  const my = xs.reduce((a, s) => a + s.kib, 0) / xs.length;
  const slope = xs.reduce((a, s) => a + (s.ms - mx) * (s.kib - my), 0) / xs.reduce((a, s) => a + (s.ms - mx) ** 2, 0);
  return { samples: xs.length, kibPerS: slope * 1000, growthKib: slope * (toMs - fromMs) };
}
