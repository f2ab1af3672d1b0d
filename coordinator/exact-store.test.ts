import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rngFromKey } from '../shared/rng.js';
import { DEFAULT_MAX_IN_MEMORY, ExactStore, MAX_IN_MEMORY_ENV, maxInMemoryValues } from './exact-store.js';

const dir = mkdtempSync(join(tmpdir(), 'loadfleet-exact-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 150,000 values over 4 series (one left empty), several spill blocks' worth, ties and negatives included. */
function feed(store: ExactStore): void {
  const ids = [store.newSeries(), store.newSeries(), store.newSeries(), store.newSeries()];
  const rng = rngFromKey('exact-store');
  for (let i = 0; i < 150_000; i++) {
    const u = rng.next();
    if (i % 3 === 0) store.add(ids[0]!, 40e6 + Math.floor(u * 1000) * 1e3);
    else if (i % 3 === 1) store.add(ids[1]!, 15e6 + u * 1e7);
    else store.add(ids[3]!, Math.round((u - 0.1) * 2e6));
  }
}

describe('exact store', () => {
  it('gives the same summaries in memory and through a spill file, whatever the bound', async () => {
    const runs = [];
    for (const bound of [DEFAULT_MAX_IN_MEMORY, 100_000, 1000, 0]) {
      const path = join(dir, `spill-${bound}`);
      const store = new ExactStore(path, bound);
      feed(store);
      expect(existsSync(path)).toBe(bound < 150_000);
      runs.push({ summaries: await store.summaries(), method: store.method() });
      expect(existsSync(path)).toBe(false);
    }
    expect(runs[0]!.method).toEqual({ values: 150_000, method: 'in-memory sort', passes: 0 });
    for (const r of runs.slice(1)) {
      expect(r.summaries).toEqual(runs[0]!.summaries);
      expect(r.method.method).toBe('streamed selection');
      expect(r.method.passes).toBeGreaterThan(0);
    }
    expect(runs[0]!.summaries[2]).toBeNull();
    expect(runs[0]!.summaries[3]!.min).toBeLessThan(0);
  });

  it('takes its bound from the environment only when it is a whole number', () => {
    expect(maxInMemoryValues({ [MAX_IN_MEMORY_ENV]: '0' })).toBe(0);
    expect(maxInMemoryValues({ [MAX_IN_MEMORY_ENV]: '12' })).toBe(12);
    expect(maxInMemoryValues({ [MAX_IN_MEMORY_ENV]: 'x' })).toBe(DEFAULT_MAX_IN_MEMORY);
    expect(maxInMemoryValues({})).toBe(DEFAULT_MAX_IN_MEMORY);
  });
});
