import { describe, expect, it } from 'vitest';
import { canaryFailure, checkCanary } from './canary.js';

const M = 'KQZV_REQ_7_00041';

describe('checkCanary', () => {
  it('passes its own marker at the start of the visible answer, after any reasoning', () => {
    const c = checkCanary(M, { visible: ` ${M} the answer`, reasoning: 'thinking about it', complete: true });
    expect(c).toEqual({
      marker: M,
      passed: true,
      marker_at_start: true,
      observed_marker_count: 1,
      foreign_marker_count: 0,
      capture_complete: true,
    });
  });

  it('fails another request marker anywhere, a late marker, and an incomplete capture (closed)', () => {
    const foreign = checkCanary(M, { visible: `${M} as KQZV_REQ_7_00042 said`, reasoning: '', complete: true });
    expect(foreign).toMatchObject({ passed: false, foreign_marker_count: 1 });
    expect(canaryFailure(foreign)).toBe(`canary ${M}: 1 other request marker(s) in the response`);
    const inReasoning = checkCanary(M, { visible: M, reasoning: 'ABCD_REQ_1_00003', complete: true });
    expect(inReasoning.passed).toBe(false);
    const late = checkCanary(M, { visible: `Sure! ${M}`, reasoning: '', complete: true });
    expect(late).toMatchObject({ passed: false, marker_at_start: false, observed_marker_count: 1 });
    const cut = checkCanary(M, { visible: `${M} ...`, reasoning: '', complete: false });
    expect(cut.passed).toBe(false);
    expect(canaryFailure(cut)).toMatch(/incomplete \(fails closed\)/);
  });
});
