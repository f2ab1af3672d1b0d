import { describe, expect, it } from 'vitest';
import type { AgentHealth } from '../shared/protocol.js';
import { clientHealth } from './client-health.js';
import type { TimingEvent } from './timing-uncertainty.js';
import { TtftUncertainty } from './timing-uncertainty.js';

const healthy: AgentHealth = {
  schedule_lag_p99_ms: 1,
  schedule_lag_max_ms: 2,
  event_loop_delay_p99_ms: 11,
  event_loop_delay_max_ms: 12,
  cpu_ms: 100,
  elu: 0.2,
};
const lateSend = (second: number, lagMs: number): TimingEvent => ({ second, cls: 'rt', uncertaintyNs: null, lagNs: lagMs * 1e6 });
const uncertain = (second: number, ms: number): TimingEvent => ({ second, cls: 'rt', uncertaintyNs: ms * 1e6, lagNs: 0 });

describe('clientHealth', () => {
  it('names an agent over a sampled limit, and reports the worst figures', () => {
    const h = clientHealth([
      { id: 'a', health: healthy },
      { id: 'b', health: { ...healthy, schedule_lag_p99_ms: 60, event_loop_delay_p99_ms: 70, elu: 0.97 } },
      { id: 'c', health: null },
    ]);
    expect(h.client_limited).toBe(true);
    expect(h.limited_agents).toEqual(['b']);
    expect(h.reasons).toEqual(['b: event-loop delay p99 70 ms > 50 ms, event-loop utilisation 97.0% > 95%']);
    expect(h.schedule_lag_p99_ms).toBe(60);
    expect(h.event_loop_delay_p99_ms).toBe(70);
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

  it('one stall in a stage does not decide: one late send of 40, one 97 ms stamp of 30', () => {
    const h = clientHealth(
      [
        {
          id: 'a',
          health: { ...healthy, schedule_lag_p99_ms: 97 },
          lag: { measured: 40, over: 1 },
          uncertaintyMeasured: 30,
          events: [lateSend(12, 97), uncertain(12, 97.255)],
        },
      ],
      [{ name: 'rt', ttft_uncertainty_p99_ms: 97.255, ttft_p50_ms: 691.8, measured: 30, over: 1 }],
    );
    expect(h.client_limited).toBe(false);
    expect(h.reasons).toEqual([]);
    // The evidence is still there: the share, its bounds, and the second it happened.
    expect(h.classes[0]).toMatchObject({ name: 'rt', limit_ms: 69.18, requests: 30, over_limit: 1, limited: false });
    expect(h.classes[0]!.share_lower).toBeCloseTo(0.001708, 6);
    expect(h.agents[0]!.schedule_lag).toMatchObject({ requests: 40, over_limit: 1 });
    expect(h.stalls).toEqual([
      {
        agent_id: 'a',
        second: 12,
        requests: 2,
        max_ttft_uncertainty_ms: 97.255,
        max_schedule_lag_ms: 97,
        cause:
          "sends up to 97 ms late (the agent's loop busy or its process waiting for a CPU), and first-token bytes up to 97.255 ms unread (the agent's event loop busy)",
      },
    ]);
  });

  it('a share shown above 1% decides, naming the agent, the second and what was seen', () => {
    const events = [lateSend(3, 60), lateSend(7, 80), lateSend(7, 120), lateSend(7, 90), lateSend(9, 55)];
    const h = clientHealth([
      { id: 'a', health: healthy, lag: { measured: 100, over: 0 } },
      { id: 'b', health: healthy, lag: { measured: 100, over: 5 }, events },
    ]);
    expect(h.client_limited).toBe(true);
    expect(h.limited_agents).toEqual(['b']);
    expect(h.reasons[0]).toMatch(
      /^b: 5 of 100 \(5\.0%, above 2\.0% with 95% confidence > 1\.0% allowed\) of its requests were sent more than 50 ms after their intended time — worst: b at second 7, 3 requests, sends up to 120 ms late/,
    );
    expect(h.reasons[0]).toContain('(3 seconds in all)');
    expect(h.stalls.map((s) => [s.second, s.requests])).toEqual([
      [7, 3],
      [3, 1],
      [9, 1],
    ]);
  });

  it('a class is limited by the share of its stamps over the larger of 50 ms and 10% of its TTFT p50', () => {
    const agents = [{ id: 'a', health: healthy }];
    const cls = (over: number, measured: number, p50: number | null) => [
      { name: 'chat', ttft_uncertainty_p99_ms: 91, ttft_p50_ms: p50, measured, over },
    ];
    expect(clientHealth(agents, cls(1, 300, 900)).client_limited).toBe(false);
    const h = clientHealth(agents, cls(12, 300, 900));
    expect(h.reasons[0]).toMatch(
      /^class chat: 12 of 300 \(4\.0%, above 2\.3% with 95% confidence > 1\.0% allowed\) of its first-token stamps were uncertain by more than 90 ms \(the larger of 50 ms and 10% of its TTFT p50\), an estimate whose coverage was not measured$/,
    );
    // The estimate's measured coverage (the agents' self-tests) is said where the reason reads it.
    expect(clientHealth(agents, cls(12, 300, 900), 0.9723).reasons[0]).toMatch(
      /, an estimate that covered 97\.2% of stamp errors in the agents' self-tests$/,
    );
    expect(h.classes[0]!.limit_ms).toBe(90);
    expect(clientHealth(agents, cls(12, 300, 10)).classes[0]!.limit_ms).toBe(50);
    // A class without the figure (old agents) is held to nothing.
    expect(clientHealth(agents, cls(0, 0, 10)).client_limited).toBe(false);
  });
});

describe('what the agent saw its process do', () => {
  it("names the cause from the agent's own stall log in that second or the next", () => {
    const stalls = [
      { second: 8, ms: 112.4, cause: 'no_cpu' as const, cpu_ms: 3.1, gc_ms: 0 },
      { second: 20, ms: 70, cause: 'gc' as const, cpu_ms: 70, gc_ms: 61.5 },
    ];
    const h = clientHealth([
      {
        id: 'a',
        health: { ...healthy, stalls },
        lag: { measured: 40, over: 1 },
        events: [lateSend(7, 97), lateSend(20, 60), lateSend(30, 55)],
      },
    ]);
    const cause = (second: number) => h.stalls.find((s) => s.second === second)!.cause;
    expect(cause(7)).toBe(
      "sends up to 97 ms late (the agent's loop busy or its process waiting for a CPU), and the agent logged its loop 112.4 ms late at second 8: the process got 3.1 ms of CPU in that time: it waited for a CPU (a busy host) or was paused",
    );
    expect(cause(20)).toMatch(/logged its loop 70 ms late at second 20: a garbage collection \(61\.5 ms of it\)$/);
    expect(cause(30)).not.toMatch(/logged/);
  });
});

describe('TtftUncertainty', () => {
  const rec = (over: Partial<Record<string, unknown>>) =>
    ({ class: 'rt', status: 'ok', intended_ns: 0, sent_ns: 0, first_content_uncertainty_ns: 1e6, ...over }) as never;

  it('counts lag and uncertainty over their limits and itemises each request over the floor by second', () => {
    const t = new TtftUncertainty();
    for (let i = 0; i < 98; i++) t.add(0, rec({ intended_ns: i * 1e8, sent_ns: i * 1e8 + 1e6 }));
    t.add(0, rec({ intended_ns: 12e9, sent_ns: 12.08e9 }));
    // An unread first token is itemised by its arrival, a late send by its send.
    t.add(0, rec({ intended_ns: 12.5e9, sent_ns: 12.5e9, first_content_ns: 13.2e9, first_content_uncertainty_ns: 97e6 }));
    t.add(0, rec({ status: 'timeout', intended_ns: 14e9, sent_ns: 14e9, first_content_uncertainty_ns: 500e6 }));
    expect(t.lagCount(0)).toEqual({ measured: 101, over: 1 });
    expect(t.agentCount(0)).toBe(100);
    expect(t.classCount('rt', 69.18)).toEqual({ measured: 100, over: 1 });
    expect(t.classCount('rt', 100)).toEqual({ measured: 100, over: 0 });
    expect(t.eventsOf(0).map((e) => [e.second, e.lagNs, e.uncertaintyNs])).toEqual([
      [12, 80e6, 1e6],
      [13, 0, 97e6],
    ]);
    expect(t.lagCount(1)).toBeNull();
  });
});
