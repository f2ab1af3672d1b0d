import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ArmResult, p95, runArm } from './fit.js';
import { arrivalsOf, readScenario } from './scenario.js';

const EXAMPLES = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples');
const full = readScenario(join(EXAMPLES, 'batch-interference.plan.json'));
const short = readScenario(join(EXAMPLES, 'batch-interference-short.plan.json'));

describe('the default profile against the seed experiment (offline, virtual time)', () => {
  let alone: ArmResult;
  let together: ArmResult;
  beforeAll(() => {
    alone = runArm(full, ['realtime']);
    together = runArm(full, ['realtime', 'batch']);
  });
  const surge = (r: ArmResult) => r.stats['realtime']!['surge']!;

  it('realtime alone: surge p95 TTFT within 2x of 133 ms and p95 TPOT within 2x of 7.7 ms', () => {
    expect(surge(alone).ttftP95Ms).toBeGreaterThan(133 / 2);
    expect(surge(alone).ttftP95Ms).toBeLessThan(133 * 2);
    expect(surge(alone).tpotP95Ms).toBeGreaterThan(7.7 / 2);
    expect(surge(alone).tpotP95Ms).toBeLessThan(7.7 * 2);
    expect(alone.peaks.poolSaturation).toBeLessThan(0.5);
  });

  it('with batch already running: >= 30x the surge p95 TTFT, 128 running, a waiting queue, saturation >= 1', () => {
    expect(surge(together).ttftP95Ms / surge(alone).ttftP95Ms).toBeGreaterThanOrEqual(30);
    expect(together.peaks.running).toBe(128);
    expect(together.peaks.waiting).toBeGreaterThan(0);
    expect(together.peaks.poolSaturation).toBeGreaterThanOrEqual(1);
    // As in the seed: every request served, KV far from full, nothing preempted.
    expect([together.rejected, together.peaks.preemptions]).toEqual([0, 0]);
    expect(together.peaks.kvUsagePct).toBeLessThan(100);
  });

  it('the short plan still shows >= 10x on realtime surge p95 TTFT', () => {
    const a = runArm(short, ['realtime']).stats['realtime']!['surge']!;
    const b = runArm(short, ['realtime', 'batch']).stats['realtime']!['surge']!;
    expect(a.requests).toBeGreaterThan(30);
    expect(b.ttftP95Ms / a.ttftP95Ms).toBeGreaterThanOrEqual(10);
  });
});

describe('scenario replay', () => {
  it('draws a seeded Poisson stream at the plan rate', () => {
    const batch = full.classes.find((c) => c.name === 'batch')!;
    const a = arrivalsOf(full, batch);
    expect(arrivalsOf(full, batch)).toEqual(a);
    expect(a.length).toBeGreaterThan(2.75 * 180 * 0.85);
    expect(a.length).toBeLessThan(2.75 * 180 * 1.15);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...a)).toBeLessThan(180);
  });

  it('takes the nearest-rank p95', () => {
    expect(p95(Array.from({ length: 100 }, (_, i) => i + 1))).toBe(95);
    expect(p95([3])).toBe(3);
    expect(p95([])).toBeNaN();
  });
});
