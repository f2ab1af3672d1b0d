// `agent --workers auto`: as many worker threads as the host has free cores. A worker thread only
// pays where it has a core nobody else uses (bench `workers`: 2 threads on a 2-core machine that
// also runs the target gained little or lost), so a host with one free core or less runs the
// share on the main thread alone.
import { availableParallelism, loadavg } from 'node:os';
import type { SelfTestFigures } from '../../shared/self-test.js';

/** Free cores now: logical CPUs less the 1-minute load average (≥ 0). */
export function freeCoresNow(): number {
  return Math.max(0, availableParallelism() - loadavg()[0]!);
}

/** Worker threads for `free` free cores: one each, 1 (no threads) below two, at most 64. */
export function workersFor(free: number): number {
  const n = Math.floor(free);
  return n < 2 ? 1 : Math.min(64, n);
}

/**
 * The threads `--workers auto` asks for each of the `agents` this process serves (they share its
 * free cores): from the self-test's free cores when this process just measured them, else measured now.
 */
export function autoWorkers(
  figures: SelfTestFigures | null,
  now: () => number = freeCoresNow,
  agents = 1,
): { workers: number; free: number } {
  const free = figures?.source === 'measured' ? figures.free_cores : now();
  return { workers: workersFor(free / Math.max(1, agents)), free };
}
