import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, faultRateProblems, faultTokenIndex, parseFaultFlag, pickFault, uniformAt } from './faults.js';

describe('fault choice', () => {
  it('is a pure function of seed and arrival index', () => {
    const rates = { '429': 0.2, reset: 0.3 };
    const a = Array.from({ length: 200 }, (_, i) => pickFault(rates, 7, i));
    const b = Array.from({ length: 200 }, (_, i) => pickFault(rates, 7, i));
    expect(a).toEqual(b);
    expect(Array.from({ length: 200 }, (_, i) => pickFault(rates, 8, i))).not.toEqual(a);
  });

  it('fires each kind at about its rate and never more than one', () => {
    const n = 20_000;
    const counts = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const kind = pickFault({ '5xx': 0.1, truncate: 0.25 }, 1, i) ?? 'none';
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
    expect((counts.get('5xx') ?? 0) / n).toBeCloseTo(0.1, 1);
    expect((counts.get('truncate') ?? 0) / n).toBeCloseTo(0.25, 1);
    expect([...counts.keys()].sort()).toEqual(['5xx', 'none', 'truncate']);
  });

  it('draws uniforms in [0, 1)', () => {
    const us = Array.from({ length: 1000 }, (_, i) => uniformAt(123, i));
    expect(Math.min(...us)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...us)).toBeLessThan(1);
    expect(us.reduce((a, b) => a + b, 0) / us.length).toBeCloseTo(0.5, 1);
  });

  it('places mid-stream faults before the last token', () => {
    expect(faultTokenIndex('reset', 10)).toBe(2);
    expect(faultTokenIndex('reset', 1)).toBe(0);
    expect(faultTokenIndex('truncate', 10)).toBe(5);
    expect(faultTokenIndex('stall', 2)).toBe(1);
    expect(faultTokenIndex('malformed', 1)).toBe(0);
  });
});

describe('fault flags', () => {
  it('parses NAME-rate=P and stall-ms=N for every kind', () => {
    for (const kind of FAULT_KINDS) expect(parseFaultFlag(`${kind}-rate=0.25`)).toEqual({ kind, rate: 0.25 });
    expect(parseFaultFlag('stall-ms=750')).toEqual({ stallMs: 750 });
  });

  it('rejects unknown names and non-numbers', () => {
    expect(() => parseFaultFlag('slow-rate=0.1')).toThrow(/unknown fault 'slow-rate'/);
    expect(() => parseFaultFlag('429-rate=lots')).toThrow(/NAME=NUMBER/);
    expect(() => parseFaultFlag('429-rate')).toThrow(/NAME=NUMBER/);
  });

  it('validates rates', () => {
    expect(faultRateProblems({ '429': 0.5, hang: 0.5 })).toEqual([]);
    expect(faultRateProblems({ '429': 1.5 })).toEqual(['faults.429: rate must be in [0, 1]']);
    expect(faultRateProblems({ '429': 0.6, hang: 0.6 })[0]).toMatch(/exceeds 1/);
  });
});
