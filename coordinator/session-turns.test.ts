import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../shared/metrics.js';
import { blankRecord } from '../shared/metrics.js';
import { SessionTurns } from './session-turns.js';

function turn(session: number, t: number, ok: boolean): RequestRecord {
  return { ...blankRecord('chat', session * 10 + t, null), session_id: session, turn: t, status: ok ? 'ok' : 'http_error', done_ns: 1 };
}

describe('session turn counts (issue 22)', () => {
  it('counts turns cut by the run end apart from turns abandoned after a failure', () => {
    const ones = (n: number) => Array.from({ length: n }, () => 1);
    const shapes = {
      turns: [3, 3, 3, 2],
      userTokens: [3, 3, 3, 2].map(ones),
      outputTokens: [3, 3, 3, 2].map(ones),
      thinkNs: [2, 2, 2, 1].map(ones),
    };
    const t = new SessionTurns(shapes);
    // Session 0 ran all 3; session 1 was cut after turn 1 (ok); session 2's turn 2 failed; session 3 never started.
    for (const r of [turn(0, 1, true), turn(0, 2, true), turn(0, 3, true), turn(1, 1, true), turn(2, 1, true), turn(2, 2, false)]) t.add(r);
    expect(t.turnCounts()).toEqual({ turns_planned: 9, turns_sent: 6, turns_not_sent: 2, turns_abandoned: 1 });
  });
});
