import { describe, expect, it } from 'vitest';
import { ErrorCode, LoadfleetError } from '../shared/errors.js';
import type { AgentEvent, AgentPhase } from './phases.js';
import { AGENT_EVENTS, AGENT_PHASES, agentMoves, agentNext, agentStep, reachedState, runMayMove, TERMINAL_PHASES } from './phases.js';

// The table again, written out by hand from docs/agent-lifecycle.md: a change to either must be a
// change to both. Each line: phase, then event→target ('=' stays, 'back' returns where it was).
const WRITTEN = `
joined       probe→probing message→= fail→failed lose→lost
probing      probed→probed message→= fail→failed lose→lost
probed       plan→preparing message→= fail→failed lose→lost
preparing    prepared→prepared message→= fail→failed lose→lost
prepared     arm→arming stop→draining message→= link-down→reconnecting fail→failed lose→lost
arming       armed→armed started→live stop→draining message→= link-down→reconnecting final→final fail→failed lose→lost
armed        armed→= started→live stop→draining message→= link-down→reconnecting final→final lose→lost
live         armed→= started→= stop→draining message→= link-down→reconnecting final→final lose→lost
draining     armed→= started→= stop→= message→= link-down→reconnecting final→final lose→lost
reconnecting arm→= stop→= rejoin→back message→= final→final lose→lost
final        message→= final→= stop→= link-down→= lose→= upload→=
lost         message→= upload→= stop→= link-down→= lose→= final→=
failed       message→= prepared→= armed→= stop→= link-down→= lose→= fail→=
`;

function written(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of WRITTEN.trim().split('\n')) {
    const [from, ...cells] = line.trim().split(/\s+/);
    for (const cell of cells) {
      const [event, to] = cell.split('→');
      out.set(`${from} ${event}`, to!);
    }
  }
  return out;
}

describe('the agent phase table', () => {
  it('is the written table, cell for cell', () => {
    const code = new Map(agentMoves().map((m) => [`${m.from} ${m.event}`, m.to as string]));
    expect(code).toEqual(written());
  });

  it('every legal move lands where the table says; every other (phase, event) pair is LF_PHASE_MOVE', () => {
    const table = written();
    let legal = 0;
    let illegal = 0;
    for (const from of AGENT_PHASES) {
      for (const event of AGENT_EVENTS) {
        const to = table.get(`${from} ${event}`);
        if (to === undefined) {
          illegal++;
          expect(agentNext(from, event)).toBeNull();
          let caught: unknown;
          try {
            agentStep(from, event, 'agent a1');
          } catch (err) {
            caught = err;
          }
          expect(caught).toBeInstanceOf(LoadfleetError);
          expect((caught as LoadfleetError).code).toBe(ErrorCode.PHASE_MOVE);
          expect((caught as LoadfleetError).message).toBe(`agent a1: no move for ${event} in phase ${from}`);
        } else {
          legal++;
          const expected = to === '=' ? from : to === 'back' ? 'live' : (to as AgentPhase);
          expect(agentStep(from, event, 'a', 'live')).toBe(expected);
        }
      }
    }
    expect(legal).toBe(table.size);
    expect(legal + illegal).toBe(AGENT_PHASES.length * AGENT_EVENTS.length);
  });

  it('terminal phases stay terminal whatever arrives', () => {
    for (const from of TERMINAL_PHASES)
      for (const event of AGENT_EVENTS) expect([from, null]).toContain(agentNext(from, event as AgentEvent));
  });

  it('a rejoin returns to where the agent was when its link went down', () => {
    for (const back of ['prepared', 'arming', 'armed', 'live', 'draining'] as const)
      expect(agentStep('reconnecting', 'rejoin', 'a', back)).toBe(back);
  });

  it("failed-run.json's words for the phases before the start", () => {
    expect(AGENT_PHASES.slice(0, 5).map(reachedState)).toEqual(['joined', 'joined', 'probed', 'preparing', 'prepared']);
    expect(reachedState('failed')).toBe('failed');
  });
});

describe('the run phase table', () => {
  it('open → closing → closed, and nothing else', () => {
    const phases = ['open', 'closing', 'closed'] as const;
    const legal = phases.flatMap((a) => phases.filter((b) => runMayMove(a, b)).map((b) => `${a}→${b}`));
    expect(legal).toEqual(['open→closing', 'closing→closed']);
  });
});
