// The coordinator's state machines, written down as tables (pure; docs/agent-lifecycle.md draws
// them): one agent's phase in one run, driven by what the coordinator sends and what the agent
// answers, and the run's own phase. The channel (channel.ts) is the only thing that moves an
// agent's phase, and only through agentStep; an event a phase has no row for is LF_PHASE_MOVE.
import { ErrorCode, LoadfleetError } from '../shared/errors.js';

/**
 * One agent's phase in one run:
 *
 *   joined → probing → probed → preparing → prepared → arming → armed → live → draining → final
 *
 * joined: the run took the agent and sent its welcome; probing/probed: its clock is being / was
 * measured; preparing/prepared: it was given the plan / said it is ready; arming/armed: it was
 * given the start instant / confirmed it; live: its load is under way (its `started` was seen);
 * draining: it was told to stop and its `final` is awaited; reconnecting: its link is down and it
 * is within its grace (it goes back to where it was when it rejoins); final: its `final` is merged;
 * lost: its grace ran out or its process restarted (a restarted process may still hand its spool
 * over on the channel); failed: it failed, or its link closed, before the start.
 */
export type AgentPhase =
  | 'joined'
  | 'probing'
  | 'probed'
  | 'preparing'
  | 'prepared'
  | 'arming'
  | 'armed'
  | 'live'
  | 'draining'
  | 'reconnecting'
  | 'final'
  | 'lost'
  | 'failed';

/** Every phase, in the order the table lists them. */
export const AGENT_PHASES: readonly AgentPhase[] = [
  'joined',
  'probing',
  'probed',
  'preparing',
  'prepared',
  'arming',
  'armed',
  'live',
  'draining',
  'reconnecting',
  'final',
  'lost',
  'failed',
];

/** Phases nothing moves out of: whatever arrives late leaves them as they are. */
export const TERMINAL_PHASES: ReadonlySet<AgentPhase> = new Set(['final', 'lost', 'failed']);

/**
 * What moves an agent's phase: the coordinator's own steps (probe, plan, arm, stop, the link going
 * down, the agent rejoining, its loss, a failure before the start) and the agent's messages.
 */
export type AgentEvent =
  | 'probe' // the clock probes at join begin
  | 'probed' // they are fitted
  | 'plan' // the plan and share are sent
  | 'prepared' // agent: ready
  | 'arm' // the start instant is sent
  | 'armed' // agent: armed
  | 'started' // agent: its first request went out
  | 'stop' // the run told it to stop (abort rule, interrupt, loss, failure, deadline)
  | 'final' // agent: its final (merged)
  | 'link-down' // its link closed or went silent, within a grace
  | 'rejoin' // the same process is back on a new link
  | 'lose' // the grace ran out, the grace is 0, or its process restarted
  | 'fail' // it failed, its link closed or it timed out, before the start
  | 'message' // agent: records, intervals, heartbeats, probe replies, an in-run failure report
  | 'upload'; // agent: a restarted process's spool (records and final) on a lost channel

/** Where each event takes each phase ('=' stays); a missing cell is an illegal move. */
const TABLE: Record<AgentPhase, Partial<Record<AgentEvent, AgentPhase | '=' | 'back'>>> = {
  joined: { probe: 'probing', message: '=', fail: 'failed', lose: 'lost' },
  probing: { probed: 'probed', message: '=', fail: 'failed', lose: 'lost' },
  probed: { plan: 'preparing', message: '=', fail: 'failed', lose: 'lost' },
  preparing: { prepared: 'prepared', message: '=', fail: 'failed', lose: 'lost' },
  prepared: { arm: 'arming', stop: 'draining', message: '=', 'link-down': 'reconnecting', fail: 'failed', lose: 'lost' },
  arming: {
    armed: 'armed',
    started: 'live',
    stop: 'draining',
    message: '=',
    'link-down': 'reconnecting',
    final: 'final',
    fail: 'failed',
    lose: 'lost',
  },
  armed: { armed: '=', started: 'live', stop: 'draining', message: '=', 'link-down': 'reconnecting', final: 'final', lose: 'lost' },
  live: { armed: '=', started: '=', stop: 'draining', message: '=', 'link-down': 'reconnecting', final: 'final', lose: 'lost' },
  draining: { armed: '=', started: '=', stop: '=', message: '=', 'link-down': 'reconnecting', final: 'final', lose: 'lost' },
  // back: where the agent was when its link went down (the channel remembers it).
  reconnecting: { arm: '=', stop: '=', rejoin: 'back', message: '=', final: 'final', lose: 'lost' },
  final: { message: '=', final: '=', stop: '=', 'link-down': '=', lose: '=', upload: '=' },
  lost: { message: '=', upload: '=', stop: '=', 'link-down': '=', lose: '=', final: '=' },
  failed: { message: '=', prepared: '=', armed: '=', stop: '=', 'link-down': '=', lose: '=', fail: '=' },
};

/**
 * The phase `event` takes `from` to, or null when the table has no such move. `back`: the phase
 * the agent had when its link went down (where a rejoin returns it).
 */
export function agentNext(from: AgentPhase, event: AgentEvent, back: AgentPhase = 'armed'): AgentPhase | null {
  const to = TABLE[from][event];
  return to === undefined ? null : to === '=' ? from : to === 'back' ? back : to;
}

/** Like agentNext, but an illegal move is LF_PHASE_MOVE. */
export function agentStep(from: AgentPhase, event: AgentEvent, who = 'agent', back: AgentPhase = 'armed'): AgentPhase {
  const to = agentNext(from, event, back);
  if (to === null) throw new LoadfleetError(ErrorCode.PHASE_MOVE, `${who}: no move for ${event} in phase ${from}`);
  return to;
}

/** Every (phase, event) pair the table allows, with its target as written ('=' stays, 'back' returns), for the docs and the tests. */
export function agentMoves(): { from: AgentPhase; event: AgentEvent; to: AgentPhase | '=' | 'back' }[] {
  return AGENT_PHASES.flatMap((from) =>
    (Object.entries(TABLE[from]) as [AgentEvent, AgentPhase | '=' | 'back'][]).map(([event, to]) => ({ from, event, to })),
  );
}

/** Every event, for the tests (each illegal pair is one the table has no cell for). */
export const AGENT_EVENTS: readonly AgentEvent[] = [
  'probe',
  'probed',
  'plan',
  'prepared',
  'arm',
  'armed',
  'started',
  'stop',
  'final',
  'link-down',
  'rejoin',
  'lose',
  'fail',
  'message',
  'upload',
];

/** The event an agent's message is to its phase (upload: on a lost channel, a restarted process's spool). */
export function eventOf(type: string): AgentEvent {
  switch (type) {
    case 'prepared':
    case 'armed':
    case 'started':
    case 'final':
      return type;
    default:
      return 'message';
  }
}

/** What failed-run.json's agents[].state says of a phase before the start (its field definition's words). */
export function reachedState(phase: AgentPhase): string {
  switch (phase) {
    case 'joined':
    case 'probing':
      return 'joined';
    case 'probed':
    case 'preparing':
    case 'prepared':
    case 'failed':
      return phase;
    default:
      return 'prepared';
  }
}

/**
 * Phases of a run (coordinator side): open (taking agents back: resumes are routed to it) →
 * closing (every channel is terminal, or the run was stopped and is being written: a resume is
 * refused, but a `final` it already merged is still acknowledged to an agent that asks) → closed
 * (its channels are disposed; no handler of it is left on any link).
 */
export type RunPhase = 'open' | 'closing' | 'closed';

const RUN_MOVES: Record<RunPhase, readonly RunPhase[]> = { open: ['closing'], closing: ['closed'], closed: [] };

/** Whether a run may go from `from` to `to`. */
export function runMayMove(from: RunPhase, to: RunPhase): boolean {
  return RUN_MOVES[from].includes(to);
}
