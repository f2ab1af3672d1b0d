import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { anchoredClock, fitOffset, perfOffsetToHrtime, probeOffset } from './clock.js';

describe('clock probes', () => {
  it('computes θ and δ from the four timestamps', () => {
    // Agent is 1000 ns ahead; 300 ns each way; agent holds the probe 50 ns.
    expect(probeOffset({ t1: 0n, t2: 1300n, t3: 1350n, t4: 650n })).toEqual({ offsetNs: 1000, delayNs: 600 });
  });
  it('keeps the lowest-delay probes and bounds the error by half their round trip', () => {
    const samples = [
      { t1: 0n, t2: 1300n, t3: 1350n, t4: 650n },
      { t1: 0n, t2: 6000n, t3: 6050n, t4: 650n }, // delayed outbound: a bad sample
      { t1: 0n, t2: 1200n, t3: 1250n, t4: 450n },
    ];
    const fit = fitOffset(samples, 2);
    expect(fit.used).toBe(2);
    expect(fit.offset_ns).toBe(1000);
    expect(fit.uncertainty_ns).toBe(300);
    expect(fit.rtt_ns).toBe(400);
  });
  it('anchors within a millisecond of Date.now and applies an injected offset', () => {
    const c = anchoredClock();
    expect(Math.abs(Number(c.nowNs() - BigInt(Date.now()) * 1_000_000n))).toBeLessThan(2_000_000);
    const shifted = anchoredClock(250_000_000n);
    expect(Number(shifted.nowNs() - c.nowNs())).toBeGreaterThan(245_000_000);
  });

  it('maps performance.now() onto hrtime within its stated bound', () => {
    const { offsetNs, boundNs } = perfOffsetToHrtime();
    expect(boundNs).toBeGreaterThan(0);
    // A reading bracketed by two hrtime reads lands inside the bracket, give or take the bound.
    let worstNs = 0;
    for (let i = 0; i < 200; i++) {
      const before = process.hrtime.bigint();
      const mapped = Math.round(performance.now() * 1e6 + offsetNs);
      const after = process.hrtime.bigint();
      worstNs = Math.max(worstNs, Number(before) - mapped, mapped - Number(after));
    }
    expect(worstNs).toBeLessThanOrEqual(boundNs + 1); // + rounding to the ns
  });
});
