import { describe, expect, it } from 'vitest';
import { BLOCK_SIZE, blockHashes, emptyHolder, KvCache } from './kv-cache.js';

const ids = (n: number, head = 0) => Array.from({ length: n }, (_, i) => (i === 0 ? head : 1000 + i));

describe('KV block pool', () => {
  it('chains block hashes: a shared prefix shares hashes, a different head changes them all', () => {
    const a = blockHashes(ids(50));
    expect(a).toHaveLength(3); // only full blocks
    expect(blockHashes(ids(40))).toEqual(a.slice(0, 2));
    expect(blockHashes(ids(50, 7)).some((h, i) => h === a[i])).toBe(false);
  });

  it('counts a block held by two requests once, and frees it only when both let go', () => {
    const kv = new KvCache(4 * BLOCK_SIZE, true);
    const hashes = blockHashes(ids(32));
    const a = emptyHolder();
    expect(kv.grow(a, 32)).toBe(true);
    kv.commit(a, hashes, 32);
    const b = emptyHolder();
    expect(kv.admit(b, kv.lookup(hashes, 2), 33)).toBe(true); // two shared blocks + one fresh
    expect(kv.usage).toBe(3 / 4);
    kv.release(a);
    expect(kv.usage).toBe(3 / 4);
    kv.release(b);
    expect([kv.usage, kv.freeBlocks]).toEqual([0, 4]);
  });

  it('forgets every cached prefix on reset, held blocks included, and keeps its accounting', () => {
    const kv = new KvCache(4 * BLOCK_SIZE, true);
    const held = blockHashes(ids(32, 1));
    const freed = blockHashes(ids(16, 2));
    const a = emptyHolder();
    kv.grow(a, 32);
    kv.commit(a, held, 32);
    const b = emptyHolder();
    kv.grow(b, 16);
    kv.commit(b, freed, 16);
    kv.release(b);
    expect(kv.resetPrefixCache()).toBe(3);
    expect([kv.lookup(held, 9).length, kv.lookup(freed, 9).length]).toEqual([0, 0]);
    expect([kv.usage, kv.freeBlocks]).toEqual([2 / 4, 2]);
    kv.release(a); // its blocks are no longer named: nothing becomes cached
    expect(kv.lookup(held, 9)).toHaveLength(0);
    const c = emptyHolder();
    expect(kv.grow(c, 4 * BLOCK_SIZE)).toBe(true);
  });

  it('keeps freed prompt blocks cached until their space is needed, evicting the least recently freed', () => {
    const kv = new KvCache(4 * BLOCK_SIZE, true);
    const first = blockHashes(ids(32, 1));
    const second = blockHashes(ids(32, 2));
    for (const hashes of [first, second]) {
      const h = emptyHolder();
      kv.grow(h, 32);
      kv.commit(h, hashes, 32);
      kv.release(h);
    }
    expect([kv.lookup(first, 9).length, kv.lookup(second, 9).length]).toEqual([2, 2]);
    const filler = emptyHolder();
    expect(kv.grow(filler, 2 * BLOCK_SIZE)).toBe(true); // evicts the first prompt's blocks
    expect([kv.lookup(first, 9).length, kv.lookup(second, 9).length]).toEqual([0, 2]);
    expect(kv.grow(filler, 5 * BLOCK_SIZE)).toBe(false);
  });

  it('without prefix caching is a plain counter', () => {
    const kv = new KvCache(10 * BLOCK_SIZE, false);
    const h = emptyHolder();
    expect(kv.grow(h, 17)).toBe(true);
    expect(kv.usage).toBeCloseTo(0.2, 12);
    expect(kv.grow(h, 161)).toBe(false);
    kv.release(h);
    expect(kv.usage).toBe(0);
  });
});
