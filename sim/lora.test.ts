import { describe, expect, it } from 'vitest';
import { LoraSlots } from './lora.js';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('engine-sim LoRA slots', () => {
  it('loads an adapter once, holds at most max_loras, evicts the idle one and makes the third wait', async () => {
    const slots = new LoraSlots(['a', 'b', 'c'], 2, 5, 'm');
    const started: string[] = [];
    const releaseA = slots.acquire('a', () => started.push('a'));
    const releaseB = slots.acquire('b', () => started.push('b'));
    expect(started).toEqual([]); // loading
    await tick(20);
    expect(started).toEqual(['a', 'b']);
    const releaseC = slots.acquire('c', () => started.push('c'));
    await tick(20);
    expect(started).toEqual(['a', 'b']); // both slots busy: c waits
    expect(slots.families()[0]!.samples[0]).toMatch(/running_lora_adapters="a,b",waiting_lora_adapters="c"/);
    releaseA();
    await tick(20);
    expect(started).toEqual(['a', 'b', 'c']);
    expect(slots.evictions).toBe(1);
    slots.acquire('b', () => started.push('b again'))(); // loaded: no load, starts at once
    expect(started.at(-1)).toBe('b again');
    expect([...slots.loads.values()]).toEqual([1, 1, 1]);
    releaseB();
    releaseC();
  });
});
