// What a stop signal does to the coordinator. SIGTERM and SIGINT are one request, "stop", whoever
// sends it: Ctrl-C, `systemctl stop` (KillSignal=SIGINT in our units), `kill`, a container runtime
// sending the image's STOPSIGNAL (SIGINT) or its own default (SIGTERM). As PID 1 of a container a
// signal without a handler is ignored altogether, so both are always handled here, for the whole
// life of the process.
//
// Whatever is under way decides what stopping means, and says so by listening: a run stops its
// agents, takes what they hand over and writes its directory as aborted; a sweep or an experiment
// ends after its current stage or run; a fleet waiting for agents stops waiting and releases the
// ones that came. With nobody listening (before a fleet is open, between commands' steps that
// write nothing), the process exits at once with 130. A repeated signal is passed on again (every
// listener is idempotent) and said, so a second Ctrl-C cannot cut a run directory short; SIGKILL
// still ends the process at once.

/** The signals that stop the coordinator. */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** One of STOP_SIGNALS. */
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** Who listens: a run (stops its agents), or something around runs (a fleet, a sweep, an experiment). */
export type StopListenerKind = 'run' | 'around';

interface Listener {
  kind: StopListenerKind;
  fn: (signal: StopSignal) => void;
}

const listeners = new Set<Listener>();
/** The first stop signal heard, if one came: a run that begins after it is aborted at once. */
let heard: StopSignal | null = null;

/** The first stop signal this process heard, or null. */
export function stopHeard(): StopSignal | null {
  return heard;
}

/** Listens for a stop signal; returns the function that stops listening. */
export function onStopSignal(fn: (signal: StopSignal) => void, kind: StopListenerKind = 'around'): () => void {
  const l: Listener = { kind, fn };
  listeners.add(l);
  return () => void listeners.delete(l);
}

/** Whether a run is listening (its load is going, or it is being set up). */
export function runListening(): boolean {
  return [...listeners].some((l) => l.kind === 'run');
}

/** Passes `signal` to every listener of `kind` (every listener when no kind is given). */
export function deliverStop(signal: StopSignal, kind?: StopListenerKind): number {
  const to = [...listeners].filter((l) => kind === undefined || l.kind === kind);
  for (const l of to) l.fn(signal);
  return to.length;
}

/** The reason a run or a sweep records for a stop signal (run.json's status_reason names the signal). */
export function stopReason(signal: StopSignal): string {
  return signal === 'SIGINT'
    ? 'interrupted by the user (SIGINT: Ctrl-C, systemctl stop or the container stop signal)'
    : 'stopped by SIGTERM (a container runtime, a supervisor or kill)';
}

/**
 * Installs the handlers for the process's whole life (coordinator/main.ts). `exit` ends the process
 * when nothing listens.
 */
export function installStopSignals(log: (line: string) => void, exit: (code: number) => void = (c) => process.exit(c)): void {
  let times = 0;
  const onSignal = (signal: StopSignal): void => {
    times++;
    heard ??= signal;
    if (listeners.size === 0) {
      log(`${signal}: nothing under way to stop; exiting`);
      exit(130);
      return;
    }
    log(
      times === 1
        ? `${signal}: stopping${runListening() ? ' the run (the agents hand over what they finished; the run directory is written, status aborted)' : ''}`
        : `${signal} again: already stopping (bounded); send SIGKILL to drop the rest`,
    );
    deliverStop(signal);
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
}
