// What SIGTERM does to an agent (a pod evicted or deleted, `systemctl stop`): the load under way
// stops and goes through the run's normal hand-over — every finished request acknowledged by the
// coordinator, then `final`, marked `terminated` so the coordinator counts the agent as lost
// (within --max-agent-loss) instead of as finished — before the process exits. Without it the
// spool would die with the pod.
import type { ShareRunner } from './share-runner.js';

/** Runners whose load is under way, with their start() (which resolves after the hand-over). */
const running = new Map<ShareRunner, Promise<void>>();

/** Makes `runner` known to terminateRuns while its start() is under way. */
export function trackRuns(runner: ShareRunner): ShareRunner {
  const start = runner.start.bind(runner);
  runner.start = (startLocalNs) => {
    const ended = start(startLocalNs).finally(() => running.delete(runner));
    running.set(
      runner,
      ended.catch(() => {}),
    );
    return ended;
  };
  return runner;
}

/** Ends every run under way through its hand-over; resolves with how many runs were under way and how many were handed over. */
export async function terminateRuns(reason: string): Promise<{ runs: number; handedOver: number }> {
  const runs = [...running];
  for (const [runner] of runs) runner.terminate(reason);
  await Promise.all(runs.map(([, ended]) => ended));
  return { runs: runs.length, handedOver: runs.filter(([r]) => r.handedOver).length };
}
