import { describe, expect, it } from 'vitest';
import { GapList } from './gap-list.js';

describe('ITL gap lists', () => {
  it('grows past its first capacity and keeps every gap in order', () => {
    const gaps = new GapList();
    for (let i = 0; i < 100; i++) gaps.push(i * 1.5);
    expect(Array.from(gaps.view())).toEqual(Array.from({ length: 100 }, (_, i) => i * 1.5));
  });

  it('is empty after release and reuses the released array', () => {
    const a = new GapList();
    a.push(7);
    const buffer = a.view().buffer;
    a.release();
    expect(a.view().length).toBe(0);
    const b = new GapList();
    b.push(8);
    expect(b.view().buffer).toBe(buffer);
    expect(Array.from(b.view())).toEqual([8]);
  });
});
