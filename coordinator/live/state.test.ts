import { describe, expect, it } from 'vitest';
import { buildSchedule } from '../../shared/schedule.js';
import { hist, PLAN, record } from '../../test/live-fixtures.js';
import { LiveState, RECENT_S } from './state.js';

describe('LiveState', () => {
  it('adds merged seconds, offered up to the merged span, and in flight', () => {
    const live = new LiveState(PLAN, buildSchedule(PLAN), 'run-1');
    live.second(0, 'rt', { issued: 10, completed: 7, failed: 1 }, new Map([['ttft', hist(40, 50)]]));
    live.second(1, 'rt', { issued: 10, completed: 9, failed: 0 }, new Map([['ttft', hist(60)]]));
    live.second(1, 'batch', { issued: 6, completed: 2, failed: 0 }, new Map());
    const s = live.snapshot(2.4, [], null);
    const rt = s.classes[0]!;
    expect(s.mergedS).toBe(2);
    expect(rt).toMatchObject({
      name: 'rt',
      closedLoop: false,
      offered: 20,
      targetConcurrency: null,
      sent: 20,
      inFlight: 3,
      completed: 16,
      failed: 1,
    });
    expect(rt.histograms.get('ttft')!.totalCount).toBe(3);
    expect(s.classes[1]).toMatchObject({ name: 'batch', closedLoop: true, offered: null, targetConcurrency: 4, sent: 6, inFlight: 4 });
    expect(live.snapshot(25, [], null).classes[1]!.targetConcurrency).toBe(0);
  });

  it('late data for a second already written adds up', () => {
    const live = new LiveState(PLAN, buildSchedule(PLAN), 'run-1');
    live.second(3, 'rt', { issued: 5, completed: 5, failed: 0 }, new Map([['ttft', hist(10)]]));
    live.second(3, 'rt', { issued: 5, completed: 4, failed: 1 }, new Map([['ttft', hist(20)]]));
    const rt = live.snapshot(4, [], null).classes[0]!;
    expect(rt).toMatchObject({ sent: 10, completed: 9, failed: 1, inFlight: 0, offered: 40 });
    expect(rt.ttftP95RecentMs).toBeCloseTo(20, 1);
  });

  it(`the recent p95 covers only the last ${RECENT_S} merged seconds; the run p95 all of them`, () => {
    const live = new LiveState(PLAN, buildSchedule(PLAN), 'run-1');
    // 10 early seconds at 1,000 ms, then 10 at 50 ms: the run's p95 still sees the slow ones.
    for (let s = 0; s < 10; s++) live.second(s, 'rt', { issued: 1, completed: 1, failed: 0 }, new Map([['ttft', hist(1000)]]));
    for (let s = 10; s < 20; s++) live.second(s, 'rt', { issued: 1, completed: 1, failed: 0 }, new Map([['ttft', hist(50)]]));
    const rt = live.snapshot(20, [], null).classes[0]!;
    expect(rt.ttftP95RecentMs).toBeCloseTo(50, 1);
    expect(rt.ttftP95RunMs).toBeCloseTo(1000, 0);
    // One more slow second enters the recent window (1 of 10 → p95 is that second's value).
    live.second(20, 'rt', { issued: 1, completed: 1, failed: 0 }, new Map([['ttft', hist(900)]]));
    expect(live.snapshot(21, [], null).classes[0]!.ttftP95RecentMs).toBeCloseTo(900, 0);
  });

  it('counts finished records by status and HTTP status, and maps agents', () => {
    const live = new LiveState(PLAN, buildSchedule(PLAN), 'run-1');
    live.finished(record('rt', 'ok', 200, 0));
    live.finished(record('rt', 'ok', 200, 1));
    live.finished(record('rt', 'http_error', 429, 2));
    live.finished(record('rt', 'connect_error', null, 3));
    live.finished(record('nope', 'ok', 200, 4));
    const s = live.snapshot(
      1,
      [
        { id: 'a', lost: false, final: false, health: null },
        {
          id: 'b',
          lost: true,
          final: false,
          health: {
            schedule_lag_p99_ms: 2.5,
            schedule_lag_max_ms: 9,
            event_loop_delay_p99_ms: 1.5,
            event_loop_delay_max_ms: 12,
            cpu_ms: 10,
          },
        },
      ],
      { running: 3, waiting: null, saturation: 0.5 },
    );
    expect(s.classes[0]!.outcomes).toEqual([
      { status: 'connect_error', httpStatus: null, count: 1 },
      { status: 'http_error', httpStatus: 429, count: 1 },
      { status: 'ok', httpStatus: 200, count: 2 },
    ]);
    expect(s.classes[1]!.outcomes).toEqual([]);
    expect(s.agents).toEqual([
      { id: 'a', state: 'running', lagP99Ms: null, lagMaxMs: null, loopP99Ms: null, loopMaxMs: null },
      { id: 'b', state: 'lost', lagP99Ms: 2.5, lagMaxMs: 9, loopP99Ms: 1.5, loopMaxMs: 12 },
    ]);
    expect(s.server).toEqual({ running: 3, waiting: null, saturation: 0.5 });
  });
});
