// What SIGTERM does to an agent (a pod evicted or deleted, `systemctl stop`): the load under way
// stops and goes through the run's normal hand-over — every finished request acknowledged by the
// coordinator, then `final`, marked `terminated` so the coordinator counts the agent as lost
// (within --max-agent-loss) instead of as finished — before the process exits. Without it the
// spool would die with the pod.
import type { ShareRunner } from './share-runner.js';

/** A run under way: its runner, and the session's hand-over (resolves true once `final` was acknowledged). */
interface Tracked {
  runner: ShareRunner;
  handedOver: Promise<boolean>;
}

const running = new Set<Tracked>();

/**
 * Makes a run known to terminateRuns from the moment its load starts until its hand-over ends.
 * `handOver` is the session's whole hand-over (runner finished, `final` acknowledged, spool deleted).
 */
export function trackRun(runner: ShareRunner, handOver: Promise<boolean>): void {
  const t: Tracked = { runner, handedOver: handOver.catch(() => false) };
  running.add(t);
  void t.handedOver.finally(() => running.delete(t));
}

/**
 * Ends every run under way through its hand-over; resolves with how many runs were under way and
 * how many were handed over (their `final` acknowledged) within `limitMs` — a kubelet's grace
 * period is finite, and a run not handed over keeps its spool for a restarted agent.
 */
export async function terminateRuns(reason: string, limitMs = 20_000): Promise<{ runs: number; handedOver: number }> {
  const runs = [...running];
  for (const t of runs) t.runner.terminate(reason);
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<false>((r) => (timer = setTimeout(() => r(false), limitMs)));
  const results = await Promise.all(runs.map((t) => Promise.race([t.handedOver, limit])));
  clearTimeout(timer);
  return { runs: runs.length, handedOver: results.filter(Boolean).length };
}
