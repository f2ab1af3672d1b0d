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
    expect(s.bytes).toBeGreaterThanOrEqual(1_250_000);
    expect(() => s.add(-1)).toThrow(/not a non-negative integer/);
  });
});

describe('IndexSet.delete and size', () => {
  it('counts members and removes one without touching its neighbours', () => {
    const s = new IndexSet();
    for (const i of [3, 4, 5, 100_000]) s.add(i);
    expect(s.size).toBe(4);
    expect(s.delete(4)).toBe(true);
    expect(s.delete(4)).toBe(false);
    expect(s.delete(7_000_000)).toBe(false);
    expect([s.has(3), s.has(4), s.has(5)]).toEqual([true, false, true]);
    expect(s.size).toBe(3);
    expect(s.add(4)).toBe(true);
    expect(s.size).toBe(4);
  });
});

describe('IndexSet with a stride (one agent of many)', () => {
  it("keeps an agent's striped indices in 1/stride of the bits, and any other index exactly", () => {
    const s = new IndexSet(10_000);
    // Agent 7 of 10,000 over ten million indices: a thousand of its own.
    for (let i = 7; i < 10_000_000; i += 10_000) expect(s.add(i)).toBe(true);
    expect(s.add(10_007)).toBe(false);
    expect(s.has(9_990_007)).toBe(true);
    expect(s.has(9_990_008)).toBe(false);
    expect(s.size).toBe(1000);
    expect(s.bytes).toBe(128); // 1,000 bits; unstrided it would be 2 MiB
    // Another residue (a session's later turn) is kept exactly in a bitmap of its own.
    expect(s.add(8)).toBe(true);
    expect(s.add(8)).toBe(false);
    expect(s.has(8)).toBe(true);
    expect(s.size).toBe(1001);
    expect(s.bytes).toBe(128 + 16);
    expect(s.delete(8)).toBe(true);
    expect(s.delete(7)).toBe(true);
    expect([s.has(8), s.has(7), s.has(10_007)]).toEqual([false, false, true]);
    expect(s.size).toBe(999);
    expect(() => new IndexSet(0)).toThrow(/positive integer/);
  });
});
