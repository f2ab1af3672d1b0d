import { describe, expect, it } from 'vitest';
import { eluAtError, errorAtElu, monotoneCurve, parseSelfTest } from './self-test.js';

const CURVE = [
  { elu: 0.5, p99_ms: 11, n: 10 },
  { elu: 0.1, p99_ms: 1, n: 10 },
  { elu: 0.3, p99_ms: 0.5, n: 10 }, // less error at more load: noise, not promised
  { elu: 0.8, p99_ms: 41, n: 10 },
];

describe('the self-test error curve', () => {
  it('is sorted by utilisation with its error made a running maximum', () => {
    expect(monotoneCurve(CURVE).map((p) => [p.elu, p.p99_ms])).toEqual([
      [0.1, 1],
      [0.3, 1],
      [0.5, 11],
      [0.8, 41],
    ]);
  });

  it('implies an error between measured steps, the first step below them, at least the last beyond', () => {
    expect(errorAtElu(CURVE, 0.05)).toEqual({ p99_ms: 1, beyond: false });
    expect(errorAtElu(CURVE, 0.4).p99_ms).toBeCloseTo(6, 9);
    expect(errorAtElu(CURVE, 0.65).p99_ms).toBeCloseTo(26, 9);
    expect(errorAtElu(CURVE, 0.9)).toEqual({ p99_ms: 41, beyond: true });
  });

  it('states the utilisation at which the error passes a level', () => {
    expect(eluAtError(CURVE, 0.5)).toBe(0.1); // already past at the lightest step
    expect(eluAtError(CURVE, 6)).toBeCloseTo(0.4, 9);
    expect(eluAtError(CURVE, 20)).toBeCloseTo(0.59, 9); // 0.5 + 9/30 × 0.3
    expect(eluAtError(CURVE, 50)).toBeNull();
  });

  it('trusts only well-formed figures from a hello', () => {
    const ok = {
      version: 1,
      measured_at: '2026-12-03T18:00:00Z',
      source: 'measured',
      duration_ms: 1,
      cpus: 2,
      free_cores: 1,
      cpu_us_per_start: 1,
      cpu_us_per_chunk: 1,
      cpu_us_per_finish: 1,
      memory_bytes_per_stream: 1,
      memory_streams: 1,
      error_curve: [{ elu: 0.1, p99_ms: 1, n: 1 }],
      elu_at_error_ms: {},
      uncertainty_coverage: null,
    };
    expect(parseSelfTest(ok)).toBe(ok);
    expect(parseSelfTest({ ...ok, cpu_us_per_chunk: -1 })).toBeNull();
    expect(parseSelfTest({ ...ok, error_curve: [] })).toBeNull();
    expect(parseSelfTest({ ...ok, version: 2 })).toBeNull();
    expect(parseSelfTest('x')).toBeNull();
  });
});
