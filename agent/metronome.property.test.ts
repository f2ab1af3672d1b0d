// Property: however wake-ups are asked for — in any order, at instants already past, tied, or
// asked from inside another waiter's wake while the thread's tick for it is still in flight — the
// metronome wakes every waiter (none stranded), none before its instant, and of any two waiting at
// once the earlier instant first. Its one shared target slot is lowered by the loop and cleared by
// the thread; these are the interleavings that could lose a wake-up.
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { distPath } from '../test/harness.js';

const { Metronome } = (await import(pathToFileURL(distPath('agent/metronome.js')).href)) as typeof import('./metronome.js');

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;

interface Ask {
  /** µs after the case starts (on a coarse timer), or -1: from inside the previous waiter's wake. */
  askAfterUs: number;
  /** The instant, µs after the ask (negative: already past). */
  offsetUs: number;
}

describe('the metronome under generated schedules', () => {
  const m = new Metronome();
  afterAll(() => m.close());

  it('wakes every waiter, never early, earlier instants first', { timeout: 120_000 * SOAK }, async () => {
    while (!m.ready) await new Promise((r) => setTimeout(r, 5));
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            askAfterUs: fc.oneof(fc.constant(-1), fc.constant(0), fc.integer({ min: 0, max: 1500 })),
            offsetUs: fc.oneof(fc.constant(0), fc.integer({ min: -300, max: 1500 })),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        async (asks: Ask[]) => {
          let seq = 0;
          const seen: { atNs: bigint; askedSeq: number; wokeSeq: number; lateNs: bigint }[] = [];
          const ask = (a: Ask): Promise<void> => {
            const atNs = process.hrtime.bigint() + BigInt(a.offsetUs * 1000);
            const askedSeq = seq++;
            return m.at(atNs).then(() => {
              seen.push({ atNs, askedSeq, wokeSeq: seq++, lateNs: process.hrtime.bigint() - atNs });
            });
          };
          const all: Promise<void>[] = [];
          let previous: Promise<void> = Promise.resolve();
          for (const a of asks) {
            const p =
              a.askAfterUs === -1
                ? previous.then(() => ask(a)) // asked in a wake, as the open loop re-arms
                : new Promise<void>((r) => setTimeout(r, a.askAfterUs / 1000)).then(() => ask(a));
            all.push(p);
            previous = p;
          }
          const stranded = new Promise<'stranded'>((r) => setTimeout(() => r('stranded'), 5_000).unref());
          expect(await Promise.race([Promise.all(all).then(() => 'all woken' as const), stranded])).toBe('all woken');
          for (const w of seen) expect(w.lateNs >= 0n, 'a waiter woke before its instant').toBe(true);
          // Of two waiting at once (each asked before the other woke), the earlier instant wakes first.
          for (const a of seen)
            for (const b of seen)
              if (a.atNs < b.atNs && b.askedSeq < a.wokeSeq && a.askedSeq < b.wokeSeq)
                expect(a.wokeSeq < b.wokeSeq, 'of two waiting at once, the later instant woke first').toBe(true);
        },
      ),
      { numRuns: 40 * SOAK },
    );
  });
});
