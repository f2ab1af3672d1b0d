import { describe, expect, it } from 'vitest';
import { hist } from '../../test/live-fixtures.js';
import { liveBlock, MAX_AGENT_ROWS, progressLine } from './render.js';
import type { AgentSnapshot, LiveSnapshot } from './state.js';

function snapshot(over: Partial<LiveSnapshot> = {}): LiveSnapshot {
  return {
    runId: '20261202T000000Z-x-0000',
    planName: 'x',
    elapsedS: 12.4,
    durationS: 60,
    mergedS: 11,
    classes: [
      {
        name: 'realtime',
        closedLoop: false,
        offered: 97,
        targetConcurrency: null,
        sent: 96,
        inFlight: 3,
        completed: 92,
        failed: 1,
        ttftP95RecentMs: 10414.2,
        ttftP95RunMs: 61.23,
        sloP95RecentMs: 10414.2,
        sloFailuresDecide: null,
        sloTtftMs: 20_000,
        sloBreached: false,
        good: 1234,
        histograms: new Map([['ttft', hist(61)]]),
        outcomes: [],
      },
      {
        name: 'batch',
        closedLoop: true,
        offered: null,
        targetConcurrency: 5,
        sent: 40,
        inFlight: 5,
        completed: 35,
        failed: 0,
        ttftP95RecentMs: null,
        ttftP95RunMs: null,
        sloP95RecentMs: null,
        sloFailuresDecide: null,
        sloTtftMs: null,
        sloBreached: false,
        good: null,
        histograms: new Map(),
        outcomes: [],
      },
    ],
    agents: [
      { id: 'agent-1', state: 'running', lagP99Ms: 2.4, lagMaxMs: 3.1, loopP99Ms: 1.2, loopMaxMs: 8 },
      { id: 'agent-2', state: 'lost', lagP99Ms: null, lagMaxMs: null, loopP99Ms: null, loopMaxMs: null },
    ],
    server: null,
    ...over,
  };
}

describe('progressLine (plain output, one per second)', () => {
  it('keeps the established format', () => {
    expect(progressLine(snapshot())).toBe(
      't=12s realtime sent 96 inflight 3 ok 92 err 1 p95_ttft 61.2ms | batch sent 40 inflight 5 ok 35 err 0 p95_ttft -',
    );
  });
});

describe('liveBlock (terminal)', () => {
  it('renders classes, agents and an unknown server as dashes', () => {
    expect(liveBlock(snapshot())).toEqual([
      'loadfleet 20261202T000000Z-x-0000  t 12 s of 60  merged 11 s  agents 1/2',
      'class     offered  sent  in flight  ok  errors  p95 TTFT 10s  p95 TTFT run',
      'realtime       97    96          3  92       1     10,414 ms       61.2 ms',
      'batch         c=5    40          5  35       0             —             —',
      'SLO realtime: ok  p95 TTFT 10s 10,414 ms ≤ 20,000 ms  goodput 1,234 requests so far',
      'agent    state    lag p99  lag max  loop p99  loop max',
      'agent-1  running   2.4 ms   3.1 ms    1.2 ms      8 ms',
      'agent-2  lost           —        —         —         —',
      'server  running —  waiting —  saturation —',
    ]);
  });

  it('shows the latest server sample', () => {
    const lines = liveBlock(snapshot({ server: { running: 12, waiting: 3, saturation: 0.8214 } }));
    expect(lines.at(-1)).toBe('server  running 12  waiting 3  saturation 0.82');
    expect(liveBlock(snapshot({ server: { running: 7, waiting: null, saturation: null } })).at(-1)).toBe(
      'server  running 7  waiting —  saturation —',
    );
  });

  it(`lists at most ${MAX_AGENT_ROWS} agents, the worst schedule lag first`, () => {
    const agents: AgentSnapshot[] = Array.from({ length: 10 }, (_, i) => ({
      id: `agent-${i + 1}`,
      state: 'running',
      lagP99Ms: i === 7 ? 120 : i,
      lagMaxMs: null,
      loopP99Ms: null,
      loopMaxMs: null,
    }));
    const lines = liveBlock(snapshot({ agents }));
    const rows = lines.filter((l) => l.startsWith('agent-'));
    expect(rows.map((l) => l.split(/\s+/)[0])).toEqual(['agent-8', 'agent-10', 'agent-9', 'agent-7', 'agent-6', 'agent-5']);
    expect(rows[0]).toContain('120 ms');
    expect(lines).toContain('… 4 more agents (the worst by lag p99 shown)');
    expect(lines[0]).toContain('agents 10/10');
  });
});
