// Whether a process that wrote a journal on this host is still running. kill(pid, 0) alone is not
// enough: a killed process that its parent has not reaped yet (a zombie) still answers it, and in a
// container the coordinator restarted is often given the dead one's pid (1). /proc tells both.
import { readFileSync } from 'node:fs';

/** Linux reports process start times in USER_HZ ticks, 100 a second on every architecture Node runs on. */
const USER_HZ = 100;

/** A process's state letter and start (ms since the Unix epoch) read from /proc, or null without /proc. */
export function procState(pid: number, proc = '/proc'): { state: string; startedMs: number } | null {
  try {
    const stat = readFileSync(`${proc}/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields follow its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const btime = /^btime (\d+)$/m.exec(readFileSync(`${proc}/stat`, 'utf8'));
    const startTicks = Number(fields[19]);
    const startedMs = btime ? Number(btime[1]) * 1000 + (startTicks * 1000) / USER_HZ : Number.NaN;
    return { state: fields[0] ?? '?', startedMs };
  } catch {
    return null;
  }
}

/**
 * True when `pid` is running here and may be the process that wrote at `writtenAtMs`: not this
 * process, not a zombie (state Z) or dead (X), and started before then (a later one took the pid).
 */
export function writerAlive(pid: number, writtenAtMs: number, proc = '/proc'): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const s = procState(pid, proc);
  if (s === null) return true; // no /proc: kill(pid, 0) is all there is
  if (s.state === 'Z' || s.state === 'X') return false;
  // A second's slack for the tick rounding; a process started after the journal was written is another one.
  return !(s.startedMs > writtenAtMs + 1000);
}
