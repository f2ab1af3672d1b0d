// Reading another process's CPU time and memory from /proc, so every client is measured the same
// way from outside, whatever language it is written in. Linux only, like the benchmarks.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

// utime and stime are in clock ticks; the tick rate is a kernel constant, read once.
const TICKS_PER_S = readTickRate();

function readTickRate(): number {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

// Fields after the `(comm)` part of /proc/<pid>/stat, which may itself contain spaces.
function statFields(path: string): string[] | null {
  try {
    const text = readFileSync(path, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function ticksToMs(fields: string[] | null): number | null {
  if (!fields) return null;
  // fields[0] is field 3 (state), so utime (14) and stime (15) are at 11 and 12.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

/** CPU time (user + system, ms) of every thread of `pid`, or null once it has gone. */
export function processCpuMs(pid: number): number | null {
  return ticksToMs(statFields(`/proc/${pid}/stat`));
}

/** CPU time (ms) of the main thread of `pid` only: for Node, the event loop's own busy time. */
export function mainThreadCpuMs(pid: number): number | null {
  return ticksToMs(statFields(`/proc/${pid}/task/${pid}/stat`));
}

/** Resident set size (KiB) of `pid`, or null once it has gone. */
export function rssKib(pid: number): number | null {
  return statusKib(pid, 'VmRSS');
}

/** Peak resident set size so far (KiB, the kernel's high-water mark VmHWM) of `pid`, or null once it has gone. */
export function peakRssKib(pid: number): number | null {
  return statusKib(pid, 'VmHWM');
}

function statusKib(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Pids whose parent is `pid` and whose command line contains `needle` (this kernel has no `children` file). */
export function childPids(pid: number, needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(`/proc/${name}/stat`);
    if (!fields || Number(fields[1]) !== pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle)) out.push(Number(name));
    } catch {
      // gone between the listing and the read
    }
  }
  return out;
}

/** CPU time (ms, summed over all cores) the whole machine spent busy, and stolen by the hypervisor. */
export function machineCpuMs(): { busyMs: number; stealMs: number } {
  // First line of /proc/stat: cpu user nice system idle iowait irq softirq steal …, in ticks.
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return { busyMs: ((user + nice + system + irq + softirq) * 1000) / TICKS_PER_S, stealMs: (steal * 1000) / TICKS_PER_S };
}
