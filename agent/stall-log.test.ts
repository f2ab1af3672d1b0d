import { describe, expect, it } from 'vitest';
import { STALL_MS, StallLog } from './stall-log.js';

describe('StallLog', () => {
  it('logs a blocked loop with its second and a cause, and nothing while the loop is free', async () => {
    const log = new StallLog();
    log.start(() => 7);
    await new Promise((r) => setTimeout(r, 200));
    expect(log.list().filter((s) => s.ms > 150)).toEqual([]);
    const until = performance.now() + 250;
    while (performance.now() < until) {}
    await new Promise((r) => setTimeout(r, 120));
    log.stop();
    const worst = [...log.list()].sort((a, b) => b.ms - a.ms)[0]!;
    expect(worst.second).toBe(7);
    expect(worst.ms).toBeGreaterThan(STALL_MS + 100);
    expect(['gc', 'busy', 'no_cpu']).toContain(worst.cause);
    // Spinning is the process's own work: on a CPU for most of it unless the host took the CPU away.
    if (worst.cause === 'busy') expect(worst.cpu_ms).toBeGreaterThan(worst.ms / 2);
  });
});
