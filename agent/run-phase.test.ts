import { describe, expect, it } from 'vitest';
import { ErrorCode, LoadfleetError } from '../shared/errors.js';
import type { CoordinatorMessage } from '../shared/protocol.js';
import type { RunEvent, RunPhase } from './run-phase.js';
import { holdsLoad, RUN_ENDS, RUN_EVENTS, RUN_PHASES, runMoves, runNext, runStep } from './run-phase.js';

// The table again, written out by hand from docs/agent-lifecycle.md: a change to either must be a
// change to both. Each line: phase, then event→target ('=' stays).
const WRITTEN = `
welcomed     plan→preparing abort→aborted link-closed→dropped
preparing    prepared→prepared fail→failed abort→aborted link-closed→dropped
prepared     arm→running stop→= abort→aborted link-closed→dropped
running      stop→draining final→handing-over fail→failed abort→aborted give-up→given-up
draining     stop→= final→handing-over fail→failed abort→aborted give-up→given-up
handing-over stop→= acked→handed-over give-up→given-up
handed-over  stop→= acked→= give-up→= link-closed→=
aborted      prepared→= arm→= stop→= final→= abort→= fail→= give-up→= link-closed→=
dropped      prepared→= fail→= link-closed→=
failed       arm→= stop→= abort→= fail→= link-closed→=
given-up     stop→= final→= give-up→= fail→=
uploading    final→= acked→handed-over give-up→given-up
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

// What each coordinator message is to the run (the session's switch): null when it moves nothing.
function eventOf(m: CoordinatorMessage): RunEvent | null {
  switch (m.type) {
    case 'plan':
    case 'arm':
    case 'stop':
    case 'abort':
      return m.type;
    default:
      return null;
  }
}

// Plays a sequence of coordinator messages and the run's own events through the table.
function play(steps: readonly (CoordinatorMessage | RunEvent)[]): RunPhase[] {
  let phase: RunPhase = 'welcomed';
  const seen: RunPhase[] = [phase];
  for (const s of steps) {
    const event = typeof s === 'string' ? s : eventOf(s);
    if (event === null) continue;
    phase = runStep(phase, event);
    seen.push(phase);
  }
  return seen;
}

const plan = { type: 'plan', run_id: 'r', plan: {} as never, share: { index: 0, count: 1 } } as const;
const arm = { type: 'arm', start_local_ns: 1n } as const;

describe('the agent run phase table', () => {
  it('is the written table, cell for cell', () => {
    expect(new Map(runMoves().map((m) => [`${m.from} ${m.event}`, m.to as string]))).toEqual(written());
  });

  it('every legal move lands where the table says; every other (phase, event) pair is LF_PHASE_MOVE', () => {
    const table = written();
    let illegal = 0;
    for (const from of RUN_PHASES)
      for (const event of RUN_EVENTS) {
        const to = table.get(`${from} ${event}`);
        if (to !== undefined) {
          expect(runStep(from, event)).toBe(to === '=' ? from : to);
          continue;
        }
        illegal++;
        expect(runNext(from, event)).toBeNull();
        let caught: unknown;
        try {
          runStep(from, event, 'run r');
        } catch (err) {
          caught = err;
        }
        expect(caught).toBeInstanceOf(LoadfleetError);
        expect((caught as LoadfleetError).code).toBe(ErrorCode.PHASE_MOVE);
        expect((caught as LoadfleetError).message).toBe(`run r: no move for ${event} in phase ${from}`);
      }
    expect(illegal + table.size).toBe(RUN_PHASES.length * RUN_EVENTS.length);
  });

  it('ends stay ended whatever arrives late', () => {
    for (const from of RUN_ENDS) for (const event of RUN_EVENTS) expect([from, null]).toContain(runNext(from, event));
  });

  it('from message sequences: a clean run, a stopped one, one given up, one aborted before its load', () => {
    expect(play([plan, 'prepared', arm, { type: 'slew', rate_ppm: 1 }, 'final', 'acked'])).toEqual([
      'welcomed',
      'preparing',
      'prepared',
      'running',
      'handing-over',
      'handed-over',
    ]);
    expect(play([plan, 'prepared', arm, { type: 'stop', reason: 'x' }, 'final', { type: 'stop', reason: 'x' }, 'acked']).at(-1)).toBe(
      'handed-over',
    );
    expect(play([plan, 'prepared', arm, 'final', 'give-up'])).toContain('given-up');
    expect(play([plan, 'prepared', { type: 'abort', reason: 'arm timeout' }, arm]).slice(-2)).toEqual(['aborted', 'aborted']);
    expect(play([plan, 'link-closed', 'prepared']).slice(-2)).toEqual(['dropped', 'dropped']);
    expect(() => play([arm])).toThrow(expect.objectContaining({ code: ErrorCode.PHASE_MOVE }));
    expect(() => play([plan, 'prepared', arm, 'acked'])).toThrow(expect.objectContaining({ code: ErrorCode.PHASE_MOVE }));
  });

  it('a cut link is reconnected only while the load or its hand-over is under way', () => {
    expect(RUN_PHASES.filter(holdsLoad)).toEqual(['running', 'draining', 'handing-over']);
  });
});
