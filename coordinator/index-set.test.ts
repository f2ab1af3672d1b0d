import { describe, expect, it } from 'vitest';
import { IndexSet } from './index-set.js';

describe('IndexSet', () => {
  it('adds once, grows to the largest index, one bit per index', () => {
    const s = new IndexSet();
    expect(s.add(0)).toBe(true);
    expect(s.add(0)).toBe(false);
    expect(s.has(1)).toBe(false);
    expect(s.add(9_999_999)).toBe(true);
    expect(s.has(9_999_999)).toBe(true);
    expect(s.has(9_999_998)).toBe(false);
    expect(s.add(9_999_999)).toBe(false);
    // Ten million indices in about 1.25 MB (the next power of two: 2 MiB).
    expect(s.bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(() => s.add(-1)).toThrow(/not a non-negative integer/);
  });
});
