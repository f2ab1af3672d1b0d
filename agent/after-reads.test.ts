import { describe, expect, it } from 'vitest';
import { AfterReads } from './after-reads.js';

describe('work after the reads', () => {
  it('hands over everything pushed in one turn as one batch, in the check phase', async () => {
    const batches: number[][] = [];
    const after = new AfterReads<number>((items) => batches.push(items));
    after.push(1);
    after.push(2);
    expect(batches).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1, 2]]);
  });

  it('drains on demand, and the scheduled turn then finds nothing', async () => {
    const batches: number[][] = [];
    const after = new AfterReads<number>((items) => batches.push(items));
    after.push(3);
    after.drain();
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[3]]);
  });
});
