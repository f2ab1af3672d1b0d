import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { distPath } from '../test/harness.js';

// The built modules: the metronome starts its thread from the compiled metronome-thread.js.
const { Metronome } = (await import(pathToFileURL(distPath('agent/metronome.js')).href)) as typeof import('./metronome.js');
const { sleepUntil } = (await import(pathToFileURL(distPath('agent/timing.js')).href)) as typeof import('./timing.js');

describe('the metronome', () => {
  const m = new Metronome();
  afterAll(() => m.close());

  it('wakes each waiter at or after its instant, in instant order, whatever order they asked in', async () => {
    const start = process.hrtime.bigint();
    const offsetsUs = [900, 300, 1500, 300, 50, 1200, 700];
    const woken: number[] = [];
    await Promise.all(
      offsetsUs.map(async (us, i) => {
        const at = start + BigInt(us * 1000);
        await m.at(at);
        expect(process.hrtime.bigint() >= at, `waiter ${i} woke early`).toBe(true);
        woken.push(us);
      }),
    );
    expect(woken).toEqual([...offsetsUs].sort((a, b) => a - b));
  });

  it('wakes at once for an instant already past', async () => {
    const before = process.hrtime.bigint();
    await m.at(before - 1_000_000n);
    expect(process.hrtime.bigint() >= before).toBe(true);
  });

  it('releases its waiters and stops saying it is ready when its thread dies', async () => {
    const dying = new Metronome();
    while (!dying.ready) await new Promise((r) => setTimeout(r, 5));
    const far = dying.at(process.hrtime.bigint() + 60_000_000_000n);
    await (dying as unknown as { thread: { terminate(): Promise<number> } }).thread.terminate();
    await far; // released by the thread's exit, not after a minute
    expect(dying.ready).toBe(false);
  });

  it('releases pending waiters when closed, and keeps no process alive', async () => {
    const other = new Metronome();
    const far = other.at(process.hrtime.bigint() + 60_000_000_000n);
    other.close();
    await far; // resolved by close, not after a minute
  });
});

describe('sleepUntil', () => {
  it('leaves the loop idle in the last millisecond before each instant (no turn-by-turn spin)', async () => {
    const t0 = performance.now();
    const nowNs = () => (performance.now() - t0) * 1e6;
    const before = performance.eventLoopUtilization();
    // 300 instants 1 ms apart: every wait is inside the last-millisecond window a timer cannot serve.
    for (let i = 1; i <= 300; i++) {
      const due = i * 1e6;
      await sleepUntil(nowNs, due);
      expect(nowNs()).toBeGreaterThanOrEqual(due);
    }
    // A loop that yielded with setImmediate until each instant reads ~1.0 here.
    expect(performance.eventLoopUtilization(before).utilization).toBeLessThan(0.5);
  });
});
