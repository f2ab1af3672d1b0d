import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { GroupedValues } from './grouped-values.js';

// 300,000 values over 3 keys and 50 seconds (key 2 all in one second, larger than a window), in a
// scrambled order: the spilled store must hand over exactly the groups the in-memory one does.
function fill(g: GroupedValues): void {
  for (let i = 0; i < 300_000; i++) {
    const key = i % 3;
    const second = key === 2 ? 7 : ((i * 7919) % 50) - 3;
    g.add(key, second, ((i * 104_729) % 100_003) / 7 - 1000);
  }
}

function collect(g: GroupedValues): Map<string, number[]> {
  const out = new Map<string, number[]>();
  g.forEachGroup((key, second, sorted) => {
    expect(out.has(`${key}:${second}`)).toBe(false);
    out.set(`${key}:${second}`, Array.from(sorted));
  });
  return out;
}

const spillFiles = (): string[] => readdirSync(tmpdir()).filter((f) => f.startsWith(`loadfleet-report-values-${process.pid}-`));

describe('values grouped by key and second', () => {
  it('hands over each group once, sorted, the same whether held in memory or spilled and read a window at a time', () => {
    const inMemory = new GroupedValues(1_000_000);
    fill(inMemory);
    expect(inMemory.spilled).toBe(false);
    const spilled = new GroupedValues(1);
    fill(spilled);
    expect(spilled.spilled).toBe(true);
    expect(spillFiles()).toHaveLength(1);
    const a = collect(inMemory);
    const b = collect(spilled);
    expect(spillFiles()).toHaveLength(0);
    expect(b).toEqual(a);
    expect([...a.values()].reduce((n, v) => n + v.length, 0)).toBe(300_000);
    expect(a.get('2:7')!.length).toBe(100_000);
    for (const v of a.values()) for (let i = 1; i < v.length; i++) expect(v[i]!).toBeGreaterThanOrEqual(v[i - 1]!);
    // Seconds before the run's start are groups like any other.
    expect(a.has('0:-3')).toBe(true);
  });
});
