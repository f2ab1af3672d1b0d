import { describe, expect, it } from 'vitest';
import type { RunFacts } from './run-status.js';
import { agentLoss, decideRunStatus, startSkewNs } from './run-status.js';

const facts = (over: Partial<RunFacts> = {}): RunFacts => ({
  abortReason: null,
  events: [],
  startSkewNs: 1_000_000,
  maxStartSkewNs: 5_000_000,
  attempted: 100,
  failed: 0,
  maxErrorShare: 0.01,
  health: { client_limited: false, reasons: [] },
  ...over,
});

describe('decideRunStatus', () => {
  it('is completed when nothing weakens the run', () => {
    expect(decideRunStatus(facts())).toEqual({ status: 'completed', reasons: [] });
  });

  it('degrades for each weakness, in a fixed order, and says why', () => {
    const r = decideRunStatus(
      facts({
        events: ['agent b was lost (silent); within --max-agent-loss 1, the others ran on'],
        startSkewNs: 7_250_000,
        failed: 2,
        health: { client_limited: true, reasons: ['a event-loop delay p99 80 ms > 50 ms'] },
      }),
    );
    expect(r.status).toBe('degraded');
    expect(r.reasons).toEqual([
      'agent b was lost (silent); within --max-agent-loss 1, the others ran on',
      'start skew 7.250 ms > --max-start-skew-ms 5',
      '2 of 100 requests failed (2.00% > max_error_share 1.00%)',
      'client limited: a event-loop delay p99 80 ms > 50 ms',
    ]);
  });

  it('keeps the error share at the bound as completed (strictly above degrades)', () => {
    expect(decideRunStatus(facts({ failed: 1 })).status).toBe('completed');
    expect(decideRunStatus(facts({ startSkewNs: 5_000_000 })).status).toBe('completed');
    expect(decideRunStatus(facts({ startSkewNs: null, attempted: 0, failed: 0 })).status).toBe('completed');
  });

  it('is aborted whenever the run stopped early, with that reason first', () => {
    const r = decideRunStatus(facts({ abortReason: 'interrupted by the user (SIGINT)', failed: 50 }));
    expect(r.status).toBe('aborted');
    expect(r.reasons[0]).toBe('interrupted by the user (SIGINT)');
    expect(r.reasons).toHaveLength(2);
  });
});

describe('agentLoss', () => {
  it('goes on within the budget and stops beyond it, naming what the fleet already lacked', () => {
    expect(agentLoss('b', 'silent', 1, 1, 1)).toEqual({
      stop: false,
      reason: 'agent b was lost (silent); within --max-agent-loss 1, the others ran on',
    });
    expect(agentLoss('c', 'restarted', 2, 1, 2)).toEqual({
      stop: true,
      reason: 'agent c was lost (restarted); 2 lost (the fleet already lacked 1) > --max-agent-loss 2',
    });
    expect(agentLoss('a', 'x', 1, 0, 0).stop).toBe(true);
  });
});

describe('startSkewNs', () => {
  it('is the spread of the agents that sent, null when none did', () => {
    expect(startSkewNs([3, null, 10, 5])).toBe(7);
    expect(startSkewNs([null])).toBeNull();
  });
});
