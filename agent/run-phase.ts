// The agent's state machine for one run, written down as a table (pure; docs/agent-lifecycle.md
// draws it beside the coordinator's): what the coordinator's messages and the run's own events do
// to the run's phase. The session (session.ts) moves a run's phase only through runStep; an event
// a phase has no row for is LF_PHASE_MOVE.
import { ErrorCode, LoadfleetError } from '../shared/errors.js';

/**
 * One run on the agent:
 *
 *   welcomed → preparing → prepared → running → draining → handing-over → handed-over
 *
 * welcomed: the coordinator took us into a run; preparing: the plan came and the runner is being
 * made ready; prepared: we said so; running: armed, the load waits for the start instant or goes
 * (a cut link does not stop it: the link is reconnected within the grace); draining: told to stop,
 * in-flight requests finishing; handing-over: `final` is in the outbox, waiting for its ack;
 * handed-over: acknowledged, the spool deleted (or kept as the run's records). Ends otherwise:
 * aborted (the coordinator dropped the run before its load), dropped (the link closed before the
 * load: nothing to keep), failed (preparing or running failed; the coordinator was told), given-up
 * (the coordinator refused the run or stayed away past its grace: the spool is kept for a restarted
 * agent). A restarted process's upload of a spool is uploading → handed-over | given-up.
 */
export type RunPhase =
  | 'welcomed'
  | 'preparing'
  | 'prepared'
  | 'running'
  | 'draining'
  | 'handing-over'
  | 'handed-over'
  | 'aborted'
  | 'dropped'
  | 'failed'
  | 'given-up'
  | 'uploading';

/** Every phase, in the table's order. */
export const RUN_PHASES: readonly RunPhase[] = [
  'welcomed',
  'preparing',
  'prepared',
  'running',
  'draining',
  'handing-over',
  'handed-over',
  'aborted',
  'dropped',
  'failed',
  'given-up',
  'uploading',
];

/** What moves a run's phase: the coordinator's messages, and the run's own events. */
export type RunEvent =
  | 'plan' // coordinator: the plan and our share
  | 'prepared' // the runner is ready (we said `prepared`)
  | 'arm' // coordinator: the start instant (we said `armed`, the runner started)
  | 'stop' // coordinator: stop the load
  | 'final' // the runner put `final` in the outbox
  | 'acked' // coordinator: an ack covered `final`
  | 'abort' // coordinator: drop the run (before its load)
  | 'link-closed' // the link closed while no load was under way
  | 'fail' // preparing or running failed (`failed` sent)
  | 'give-up'; // the coordinator refused the resume, or stayed away past its grace

const TABLE: Record<RunPhase, Partial<Record<RunEvent, RunPhase | '='>>> = {
  welcomed: { plan: 'preparing', abort: 'aborted', 'link-closed': 'dropped' },
  preparing: { prepared: 'prepared', fail: 'failed', abort: 'aborted', 'link-closed': 'dropped' },
  prepared: { arm: 'running', stop: '=', abort: 'aborted', 'link-closed': 'dropped' },
  running: { stop: 'draining', final: 'handing-over', fail: 'failed', abort: 'aborted', 'give-up': 'given-up' },
  draining: { stop: '=', final: 'handing-over', fail: 'failed', abort: 'aborted', 'give-up': 'given-up' },
  'handing-over': { stop: '=', acked: 'handed-over', 'give-up': 'given-up' },
  'handed-over': { stop: '=', acked: '=', 'give-up': '=', 'link-closed': '=' },
  aborted: { prepared: '=', arm: '=', stop: '=', final: '=', abort: '=', fail: '=', 'give-up': '=', 'link-closed': '=' },
  dropped: { prepared: '=', fail: '=', 'link-closed': '=' },
  failed: { arm: '=', stop: '=', abort: '=', fail: '=', 'link-closed': '=' },
  'given-up': { stop: '=', final: '=', 'give-up': '=', fail: '=' },
  uploading: { final: '=', acked: 'handed-over', 'give-up': 'given-up' },
};

/** Phases a run does not leave (late events leave them as they are). */
export const RUN_ENDS: ReadonlySet<RunPhase> = new Set(['handed-over', 'aborted', 'dropped', 'failed', 'given-up']);

/** The phase `event` takes `from` to, or null when the table has no such move. */
export function runNext(from: RunPhase, event: RunEvent): RunPhase | null {
  const to = TABLE[from][event];
  return to === undefined ? null : to === '=' ? from : to;
}

/** Like runNext, but an illegal move is LF_PHASE_MOVE. */
export function runStep(from: RunPhase, event: RunEvent, runId = 'run'): RunPhase {
  const to = runNext(from, event);
  if (to === null) throw new LoadfleetError(ErrorCode.PHASE_MOVE, `${runId}: no move for ${event} in phase ${from}`);
  return to;
}

/** Every (phase, event) pair the table allows, with its target as written ('=' stays). */
export function runMoves(): { from: RunPhase; event: RunEvent; to: RunPhase | '=' }[] {
  return RUN_PHASES.flatMap((from) =>
    (Object.entries(TABLE[from]) as [RunEvent, RunPhase | '='][]).map(([event, to]) => ({ from, event, to })),
  );
}

/** Every event, for the tests. */
export const RUN_EVENTS: readonly RunEvent[] = [
  'plan',
  'prepared',
  'arm',
  'stop',
  'final',
  'acked',
  'abort',
  'link-closed',
  'fail',
  'give-up',
];

/** Whether a cut link must be reconnected (the load, or its hand-over, is under way). */
export function holdsLoad(phase: RunPhase): boolean {
  return phase === 'running' || phase === 'draining' || phase === 'handing-over';
}
