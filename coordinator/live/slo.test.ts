import { describe, expect, it } from 'vitest';
import type { Plan } from '../../shared/plan.js';
import { buildSchedule } from '../../shared/schedule.js';
import { hist, PLAN, record } from '../../test/live-fixtures.js';
import { parsePrometheus, sampleValue } from '../../test/prom-parse.js';
import { writeExposition } from './exposition.js';
import { liveFamilies } from './metric-families.js';
import { liveBlock, progressLine } from './render.js';
import { LiveState } from './state.js';

// rt declares p95 TTFT ≤ 100 ms; batch declares nothing.
const SLO_PLAN: Plan = { ...PLAN, classes: [{ ...PLAN.classes[0]!, slo: { ttft_p95_ms: 100 } }, PLAN.classes[1]!] };

/** A successful rt request whose first token came `ttftMs` after its send. */
function okAfter(ttftMs: number, index: number) {
  return { ...record('rt', 'ok', 200, index), first_output_ns: ttftMs * 1e6, first_content_ns: ttftMs * 1e6, done_ns: (ttftMs + 50) * 1e6 };
}

function state(ttftValuesMs: number[]): LiveState {
  const live = new LiveState(SLO_PLAN, buildSchedule(SLO_PLAN), 'run-slo');
  live.second(0, 'rt', { issued: 4, completed: 4, failed: 0 }, new Map([['ttft', hist(...ttftValuesMs)]]));
  live.finished(okAfter(50, 0));
  live.finished(okAfter(100, 1)); // exactly at the bound: good
  live.finished(okAfter(150, 2));
  live.finished(record('rt', 'http_error', 429, 3));
  return live;
}

describe('the live SLO view', () => {
  it('counts goodput from records and marks a class whose recent p95 passed its bound', () => {
    const breached = state([30, 30, 70, 300]).snapshot(1, [], null).classes;
    expect(breached[0]).toMatchObject({ sloTtftMs: 100, sloBreached: true, good: 2 });
    expect(breached[1]).toMatchObject({ sloTtftMs: null, sloBreached: false, good: null });
    expect(state([30, 40, 60, 90]).snapshot(1, [], null).classes[0]!.sloBreached).toBe(false);
  });

  it('ranks failed requests +∞: fast answers beside 429s are past the bound, a few failures do not decide it', () => {
    const live = new LiveState(SLO_PLAN, buildSchedule(SLO_PLAN), 'run-slo-failed');
    // 20 ended in the second: 16 rejected, 4 answered in 30 ms. Successful-only the p95 is 30 ms.
    live.second(0, 'rt', { issued: 20, completed: 4, failed: 16 }, new Map([['ttft', hist(30, 30, 30, 30)]]));
    const rt = live.snapshot(1, [], null).classes[0]!;
    expect(rt).toMatchObject({ sloBreached: true, sloP95RecentMs: null, sloFailuresDecide: { failed: 16, requests: 20 } });
    expect(rt.ttftP95RecentMs).toBeCloseTo(30, 0);
    expect(liveBlock(live.snapshot(1, [], null))).toContain(
      '\x1b[31mSLO rt: MISSED  p95 TTFT 10s a failed request (16 of 20 failed) > 100 ms  goodput 0 requests so far\x1b[0m',
    );
    expect(progressLine(live.snapshot(1, [], null))).toContain('SLO-MISSED(p95_ttft_10s failed_16_of_20 > 100ms)');
    // 1 of 20 failed: the p95 (rank 19 of the 20 ranked) is the slowest success.
    const few = new LiveState(SLO_PLAN, buildSchedule(SLO_PLAN), 'run-slo-few');
    few.second(0, 'rt', { issued: 20, completed: 19, failed: 1 }, new Map([['ttft', hist(...Array.from({ length: 19 }, () => 40))]]));
    expect(few.snapshot(1, [], null).classes[0]).toMatchObject({ sloBreached: false, sloFailuresDecide: null });
    expect(few.snapshot(1, [], null).classes[0]!.sloP95RecentMs).toBeCloseTo(40, 0);
  });

  it('turns the class row red on the terminal and says MISSED in words too', () => {
    const lines = liveBlock(state([30, 30, 70, 300]).snapshot(1, [], null));
    const rt = lines.find((l) => l.includes('SLO rt:'))!;
    expect(rt).toBe('\x1b[31mSLO rt: MISSED  p95 TTFT 10s 300 ms > 100 ms  goodput 2 requests so far\x1b[0m');
    expect(lines.filter((l) => l.includes('\x1b['))).toHaveLength(1);
    expect(lines.some((l) => l.includes('SLO batch'))).toBe(false);
    expect(progressLine(state([30, 30, 70, 300]).snapshot(1, [], null))).toContain('SLO-MISSED(p95_ttft_10s 300ms > 100ms)');
    expect(liveBlock(state([30, 40]).snapshot(1, [], null))).toContain(
      'SLO rt: ok  p95 TTFT 10s 40 ms ≤ 100 ms  goodput 2 requests so far',
    );
  });

  it('exports goodput as a counter and the breach as a gauge, only for classes with an SLO', () => {
    const p = parsePrometheus(writeExposition(liveFamilies(state([30, 30, 70, 300]).snapshot(1, [], null))));
    expect(sampleValue(p, 'loadfleet_requests_good_total', { class: 'rt' })).toBe(2);
    expect(sampleValue(p, 'loadfleet_requests_good_total', { class: 'batch' })).toBeUndefined();
    expect(sampleValue(p, 'loadfleet_slo_ttft_breached', { class: 'rt' })).toBe(1);
    expect(p.help.get('loadfleet_requests_good_total')).toMatch(/goodput/);
  });
});

describe('the live view with sampled records', () => {
  it('shows no goodput or outcome counts (they would be the sample ones), and the intervals as always', () => {
    const plan: Plan = { ...SLO_PLAN, records: { sample_every: 10 } };
    const live = new LiveState(plan, buildSchedule(plan), 'run-sampled');
    live.second(0, 'rt', { issued: 4, completed: 4, failed: 0 }, new Map([['ttft', hist(30, 40)]]));
    live.finished(okAfter(50, 0));
    live.finished(record('rt', 'http_error', 429, 3));
    const rt = live.snapshot(1, [], null).classes[0]!;
    expect(rt).toMatchObject({ good: null, outcomes: [], sent: 4, completed: 4 });
    const p = parsePrometheus(writeExposition(liveFamilies(live.snapshot(1, [], null))));
    expect(sampleValue(p, 'loadfleet_requests_good_total', { class: 'rt' })).toBeUndefined();
  });
});
