import { describe, expect, it } from 'vitest';
import type { ClassSchedule } from '../shared/schedule.js';
import { scheduleSha256 } from '../shared/schedule.js';
import { OfferedArrivals } from './offered-arrivals.js';

const planned = [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000];
const cls: ClassSchedule = { className: 'a', closedLoop: false, arrivalsNs: Float64Array.from(planned), concurrency: [] };

// The hash as it was computed before, from an array of every dispatched time (holes as −1).
function arrayHash(times: (number | undefined)[]): string {
  return scheduleSha256([{ ...cls, arrivalsNs: Float64Array.from(times, (v) => v ?? -1) }]);
}

function offeredHash(o: OfferedArrivals): string | null {
  const seq = o.sequence();
  return seq && scheduleSha256([cls], () => seq);
}

describe('OfferedArrivals', () => {
  it('a schedule kept in any order hashes as the plan, and matches it', () => {
    const o = new OfferedArrivals(planned);
    for (const i of [3, 0, 4, 1, 2]) o.add(i, planned[i]!);
    expect(o.matchesPlan()).toBe(true);
    expect(offeredHash(o)).toBe(scheduleSha256([cls]));
    expect(o.bytes).toBe(16); // five bits, in the bit set's first 16 bytes
  });

  it('hashes missing and moved arrivals exactly as the array of dispatched times did', () => {
    const o = new OfferedArrivals(planned);
    const times: (number | undefined)[] = [];
    for (const [i, t] of [
      [0, 0],
      [3, 3_000_007],
      [1, 1_000_000],
    ] as const) {
      o.add(i, t);
      times[i] = t;
    }
    expect(o.matchesPlan()).toBe(false);
    expect(offeredHash(o)).toBe(arrayHash(times));
    // A later report of an index replaces the earlier one, on the plan or off it.
    o.add(3, 3_000_000);
    o.add(1, 999);
    times[3] = 3_000_000;
    times[1] = 999;
    expect(offeredHash(o)).toBe(arrayHash(times));
    // Past the planned arrivals (another plan's schedule) still counts and hashes.
    o.add(7, 42);
    times[7] = 42;
    expect(offeredHash(o)).toBe(arrayHash(times));
    expect(o.matchesPlan()).toBe(false);
  });

  it('every arrival but none extra, all on the plan, is the only match', () => {
    const o = new OfferedArrivals(planned);
    for (const [i, t] of planned.entries()) o.add(i, t);
    o.add(5, 5_000_000);
    expect(o.matchesPlan()).toBe(false);
    const short = new OfferedArrivals(planned);
    for (const [i, t] of planned.slice(0, 4).entries()) short.add(i, t);
    expect(short.matchesPlan()).toBe(false);
  });

  it('keeps at most the bound of off-plan times; past it the hash is unknown, the mismatch still known', () => {
    const o = new OfferedArrivals(planned, 2);
    o.add(0, 1);
    o.add(1, 2);
    expect(offeredHash(o)).not.toBeNull();
    o.add(1, 3); // replaces a kept one: still within the bound
    expect(offeredHash(o)).toBe(arrayHash([1, 3]));
    o.add(2, 4);
    expect(o.sequence()).toBeNull();
    expect(o.matchesPlan()).toBe(false);
  });

  it('holds a million requests on the plan in bits', () => {
    const big = Array.from({ length: 1_000_000 }, (_, i) => i * 1000);
    const o = new OfferedArrivals(big);
    for (let i = big.length - 1; i >= 0; i--) o.add(i, big[i]!);
    expect(o.matchesPlan()).toBe(true);
    // 125,000 bytes of bits, in a power-of-two buffer.
    expect(o.bytes).toBeLessThanOrEqual(131_072);
  });
});
