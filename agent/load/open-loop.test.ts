import { describe, expect, it } from 'vitest';
import type { ClassStripe } from '../../shared/shares.js';
import { runOpenLoop } from './open-loop.js';

// A real clock in ns from the loop's start, as the run's.
function clock(): () => number {
  const t0 = performance.now();
  return () => (performance.now() - t0) * 1e6;
}

describe('the open loop', () => {
  it('sends every arrival once, in order, never before its instant, each built before its instant when there was time', async () => {
    const nowNs = clock();
    const arrivalsNs = Array.from({ length: 12 }, (_, i) => 10_000_000 + i * 4_000_000);
    const stripe = { arrivalsNs, requestIndices: arrivalsNs.map((_, i) => i * 3 + 1) } as unknown as ClassStripe;
    const built: { index: number; atNs: number }[] = [];
    const sent: { index: number; intendedNs: number; atNs: number }[] = [];
    await runOpenLoop(
      stripe,
      nowNs,
      (index, intendedNs) => {
        built.push({ index, atNs: nowNs() });
        return () => sent.push({ index, intendedNs, atNs: nowNs() });
      },
      new AbortController().signal,
    );
    expect(sent.map((s) => s.index)).toEqual(stripe.requestIndices);
    expect(built.map((b) => b.index)).toEqual(stripe.requestIndices);
    for (const [i, s] of sent.entries()) {
      expect(s.intendedNs).toBe(arrivalsNs[i]);
      expect(s.atNs).toBeGreaterThanOrEqual(arrivalsNs[i]!);
    }
    // Built ahead: before its instant, unless the loop was already late for it (a busy host).
    const ahead = built.filter((b, i) => b.atNs < arrivalsNs[i]!).length;
    expect(ahead).toBeGreaterThanOrEqual(arrivalsNs.length - 2);
  });

  it('builds nothing more once stopped', async () => {
    const nowNs = clock();
    const arrivalsNs = Array.from({ length: 50 }, (_, i) => i * 2_000_000);
    const stripe = { arrivalsNs, requestIndices: arrivalsNs.map((_, i) => i) } as unknown as ClassStripe;
    const stop = new AbortController();
    let built = 0;
    let sent = 0;
    setTimeout(() => stop.abort(), 20);
    await runOpenLoop(
      stripe,
      nowNs,
      () => {
        built++;
        return () => void sent++;
      },
      stop.signal,
    );
    expect(sent).toBeLessThan(arrivalsNs.length);
    expect(built - sent).toBeLessThanOrEqual(1);
  });
});
