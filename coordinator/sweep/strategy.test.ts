import { describe, expect, it } from 'vitest';
import type { Outcome, Rules, Verdict } from './strategy.js';
import { CLIENT_LIMITED_REMEASURES, nextStep, rulesOf } from './strategy.js';

const RULES: Rules = rulesOf(undefined);
const o = (value: number, verdict: Verdict, errorShare: number | null = 0): Outcome => ({ value, verdict, errorShare });

// Drives a strategy against a server whose capacity is `cap` (values <= cap pass), returning the values run.
function drive(strategy: Parameters<typeof nextStep>[0], cap: number, rules = RULES, scale: 'rate' | 'concurrency' = 'rate') {
  const done: Outcome[] = [];
  for (let i = 0; i < 50; i++) {
    const s = nextStep(strategy, scale, rules, done);
    if (s.kind === 'stop') return { values: done.map((d) => d.value), stop: s };
    done.push(o(s.value, s.value <= cap ? 'pass' : 'fail'));
  }
  throw new Error('did not stop');
}

describe('stages', () => {
  it('runs the values in order and stops after two failing stages', () => {
    const r = drive({ type: 'stages', values: [1, 2, 3, 4, 5, 6] }, 2.5);
    expect(r.values).toEqual([1, 2, 3, 4]);
    expect(r.stop).toMatchObject({ rule: 'max_failing_stages' });
  });
  it('max_failing_stages 1 stops at the first failure; all passing ends with done', () => {
    expect(drive({ type: 'stages', values: [1, 2, 3] }, 1.5, { ...RULES, maxFailingStages: 1 }).values).toEqual([1, 2]);
    expect(drive({ type: 'stages', values: [1, 2, 3] }, 10).stop).toMatchObject({ rule: 'done' });
  });
});

describe('geometric', () => {
  it('multiplies until two stages failed', () => {
    const r = drive({ type: 'geometric', start: 1, factor: 2, max: 1000 }, 10);
    expect(r.values).toEqual([1, 2, 4, 8, 16, 32]);
    expect(r.stop.kind === 'stop' && r.stop.rule).toBe('max_failing_stages');
  });
  it('never passes its max nor max_value', () => {
    expect(drive({ type: 'geometric', start: 1, factor: 3, max: 20 }, 100)).toMatchObject({ values: [1, 3, 9], stop: { rule: 'done' } });
    expect(drive({ type: 'geometric', start: 1, factor: 3, max: 100 }, 100, { ...RULES, maxValue: 10 })).toMatchObject({
      values: [1, 3, 9],
      stop: { rule: 'max_value', reason: 'the next value 27 is above max_value 10' },
    });
  });
  it('a concurrency grows by whole numbers, at least one each time', () => {
    expect(drive({ type: 'geometric', start: 1, factor: 1.2, max: 5 }, 100, RULES, 'concurrency').values).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('bisect', () => {
  it('measures both ends, then halves to the resolution', () => {
    const r = drive({ type: 'bisect', pass: 2, fail: 8, resolution: 0.5 }, 3.9);
    // [2,8] → 5 f → 3.5 p → 4.25 f → 3.875 p: bracket 0.375 ≤ 0.5
    expect(r.values).toEqual([2, 8, 5, 3.5, 4.25, 3.875]);
    expect(r.stop).toMatchObject({ rule: 'done', reason: 'the bracket [3.875, 4.25] is within the resolution 0.5' });
  });
  it('is not stopped by failing stages or their errors (it never goes above a value already run)', () => {
    const done = [o(2, 'pass'), o(8, 'fail', 0.9), o(5, 'fail', 0.5)];
    expect(nextStep({ type: 'bisect', pass: 2, fail: 8, resolution: 0.5 }, 'rate', RULES, done)).toEqual({ kind: 'run', value: 3.5 });
  });
  it('stops when the range does not hold the capacity', () => {
    expect(drive({ type: 'bisect', pass: 2, fail: 8, resolution: 1 }, 1).stop).toMatchObject({ rule: 'out_of_range' });
    expect(drive({ type: 'bisect', pass: 2, fail: 8, resolution: 1 }, 9)).toMatchObject({ values: [2, 8], stop: { rule: 'out_of_range' } });
  });
  it('a concurrency bisects on whole numbers', () => {
    expect(drive({ type: 'bisect', pass: 1, fail: 10, resolution: 1 }, 6, RULES, 'concurrency').values).toEqual([1, 10, 5, 7, 6]);
  });
});

describe('rules after any stage', () => {
  it('an error ends the sweep', () => {
    const s = { type: 'stages' as const, values: [1, 2, 3] };
    expect(nextStep(s, 'rate', RULES, [o(1, 'error', null)])).toMatchObject({ kind: 'stop', rule: 'endpoint_failed' });
  });
  it(`a client-limited stage is measured again up to ${CLIENT_LIMITED_REMEASURES} times, then the sweep stops saying why`, () => {
    const s = { type: 'stages' as const, values: [1, 2, 3] };
    const cl = (v: number): Outcome => ({
      value: v,
      verdict: 'client_limited',
      errorShare: 0,
      reason: 'client-limited: agent-2 at second 7',
    });
    expect(nextStep(s, 'rate', RULES, [o(1, 'pass'), cl(2)])).toEqual({ kind: 'run', value: 2 });
    expect(nextStep(s, 'rate', RULES, [o(1, 'pass'), cl(2), cl(2)])).toEqual({ kind: 'run', value: 2 });
    expect(nextStep(s, 'rate', RULES, [o(1, 'pass'), cl(2), cl(2), cl(2)])).toEqual({
      kind: 'stop',
      rule: 'client_limited',
      reason:
        'the stage at 2 was client-limited in all 3 measurements (the first and 2 re-measures), the last: client-limited: agent-2 at second 7',
    });
    // A re-measure that decides takes the stage's place: the strategy goes on from it.
    expect(nextStep(s, 'rate', RULES, [o(1, 'pass'), cl(2), o(2, 'pass')])).toEqual({ kind: 'run', value: 3 });
    const b = { type: 'bisect' as const, pass: 2, fail: 8, resolution: 1 };
    expect(nextStep(b, 'rate', RULES, [cl(2), o(2, 'pass')])).toEqual({ kind: 'run', value: 8 });
    expect(nextStep(b, 'rate', RULES, [o(2, 'pass'), o(8, 'fail'), cl(5), o(5, 'fail')])).toEqual({ kind: 'run', value: 3.5 });
    const g = { type: 'geometric' as const, start: 1, factor: 2, max: 64 };
    expect(nextStep(g, 'rate', RULES, [o(1, 'pass'), cl(2), o(2, 'pass')])).toEqual({ kind: 'run', value: 4 });
  });
  it('an error share above the limit ends an escalating sweep', () => {
    const s = { type: 'geometric' as const, start: 1, factor: 2, max: 64 };
    expect(nextStep(s, 'rate', RULES, [o(1, 'pass', 0.1)])).toEqual({ kind: 'run', value: 2 });
    expect(nextStep(s, 'rate', RULES, [o(1, 'fail', 0.11)])).toMatchObject({
      kind: 'stop',
      rule: 'max_error_share',
      reason: 'the stage at 1 failed 11.0% of its requests (> max_error_share 10.0%)',
    });
  });
});
