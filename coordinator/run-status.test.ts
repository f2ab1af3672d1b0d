import { describe, expect, it } from 'vitest';
import type { AgentHealth } from '../shared/protocol.js';
import type { RunFacts } from './run-status.js';
import { agentLoss, clientHealth, decideRunStatus, startSkewNs } from './run-status.js';

const healthy: AgentHealth = {
  schedule_lag_p99_ms: 1,
  schedule_lag_max_ms: 2,
  event_loop_delay_p99_ms: 11,
  event_loop_delay_max_ms: 12,
  cpu_ms: 100,
  elu: 0.2,
};
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

describe('clientHealth', () => {
  it('names every agent and figure over its limit, and reports the worst figures', () => {
    const h = clientHealth([
      { id: 'a', health: healthy },
      { id: 'b', health: { ...healthy, schedule_lag_p99_ms: 60, elu: 0.97 } },
      { id: 'c', health: null },
    ]);
    expect(h.client_limited).toBe(true);
    expect(h.reasons).toEqual(['b schedule lag p99 60 ms > 50 ms', 'b event-loop utilisation 97.0% > 95%']);
    expect(h.schedule_lag_p99_ms).toBe(60);
    expect(h.event_loop_delay_p99_ms).toBe(11);
  });

  it('is not limited when no agent reported', () => {
    const h = clientHealth([{ id: 'a', health: null }]);
    expect(h).toMatchObject({
      client_limited: false,
      schedule_lag_p99_ms: null,
      event_loop_delay_p99_ms: null,
      ttft_uncertainty_p99_ms: null,
    });
  });

  it('is limited by a class whose first-token stamps may be late by too much of its TTFT', () => {
    const agents = [{ id: 'a', health: healthy }];
    const timing = (u: number | null, ttft: number | null) => [{ name: 'chat', ttft_uncertainty_p99_ms: u, ttft_p50_ms: ttft }];
    // 10% of a 900 ms TTFT: 90 ms is tolerated, 91 ms is not.
    expect(clientHealth(agents, timing(90, 900)).client_limited).toBe(false);
    const h = clientHealth(agents, timing(91, 900));
    expect(h.reasons).toEqual([
      'class chat TTFT timing uncertainty p99 91 ms > 90 ms (the larger of 50 ms and 10% of its TTFT p50), an estimate whose coverage was not measured',
    ]);
    // The estimate's measured coverage (the agents' self-tests) is said where the reason reads it.
    const measured = clientHealth(agents, timing(91, 900), 0.9723);
    expect(measured.reasons[0]).toMatch(/, an estimate that covered 97\.2% of stamp errors in the agents' self-tests$/);
    expect(measured.ttft_uncertainty_coverage).toBe(0.9723);
    expect(h.ttft_uncertainty_p99_ms).toBe(91);
    // A fast class is held to the floor, a class without the figure (old agents) to nothing.
    expect(clientHealth(agents, timing(49.9, 10)).client_limited).toBe(false);
    expect(clientHealth(agents, timing(50.1, 10)).client_limited).toBe(true);
    expect(clientHealth(agents, timing(null, 10)).client_limited).toBe(false);
  });
});

describe('startSkewNs', () => {
  it('is the spread of the agents that sent, null when none did', () => {
    expect(startSkewNs([3, null, 10, 5])).toBe(7);
    expect(startSkewNs([null])).toBeNull();
  });
});
