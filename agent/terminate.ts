// What a stop signal does to an agent (a pod evicted or deleted, `systemctl stop`, a container
// runtime sending the image's STOPSIGNAL, Ctrl-C): the load under way
// stops and goes through the run's normal hand-over — every finished request acknowledged by the
// coordinator, then `final`, marked `terminated` so the coordinator counts the agent as lost
// (within --max-agent-loss) instead of as finished — before the process exits. Without it the
// spool would die with the pod.
import { ExitCode } from '../shared/errors.js';
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

/**
 * The signals that stop an agent. Both are handled: Kubernetes and container runtimes send the
 * image's STOPSIGNAL (SIGINT in ours), systemd and `kill` send SIGTERM, and as PID 1 of a container
 * an unhandled signal is ignored altogether, so the agent would load on through the grace period and
 * then be killed, spool and all.
 */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Installs the agent's stop handler: the first stop signal ends every run through its hand-over and
 * exits; a further one while the hand-over is under way is logged and otherwise ignored, so an
 * impatient second Ctrl-C or a runtime repeating its signal cannot cut the hand-over short (the
 * hand-over is bounded by terminateRuns' limit; SIGKILL still ends the process at once).
 */
export function handleStopSignals(log: (line: string) => void, spoolDir: string, limitMs?: number): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log(`${signal} again: already handing over (bounded); send SIGKILL to drop the hand-over and keep the spool`);
      return;
    }
    stopping = true;
    log(`${signal}: stopping the load and handing every finished request to the coordinator`);
    void terminateRuns(`the agent was terminated (${signal})`, limitMs).then(({ runs, handedOver }) => {
      if (runs > 0)
        log(
          handedOver === runs
            ? `handed over ${runs === 1 ? 'its run' : `${runs} runs`}; exiting`
            : `could not hand over ${runs - handedOver} run(s): the spool is kept in ${spoolDir} for a restarted agent`,
        );
      process.exit(ExitCode.INTERRUPTED);
    });
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
}
