import { describe, expect, it } from 'vitest';
import { ServerOffsetBound } from './server-clock.js';

const ms = (x: number): bigint => BigInt(Math.round(x * 1e6));

describe("the server's clock offset from joined requests", () => {
  it('holds the true offset within its bound, narrowing as requests arrive, whatever each path’s asymmetry', () => {
    // A server 37.25 ms ahead of the run's clock; each request spends an unknown share of its round
    // trip on the way out (seeded), and 1–20 ms between arrival and the first byte back.
    const trueOffset = ms(37.25);
    const bound = new ServerOffsetBound();
    let seed = 7;
    const rand = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const widths: number[] = [];
    for (let i = 0; i < 200; i++) {
      const sent = ms(1000 * i);
      const outbound = 0.2 + 3 * rand();
      const back = 1 + 19 * rand();
      const serverStart = sent + ms(outbound) + trueOffset;
      bound.add({ sentNs: sent, headersNs: sent + ms(outbound + back), serverStartNs: serverStart });
      const r = bound.result();
      if (r.kind !== 'bounded') throw new Error(r.kind);
      expect(r.lowNs <= trueOffset && trueOffset <= r.highNs, `request ${i}`).toBe(true);
      widths.push(Number(r.highNs - r.lowNs) / 1e6);
    }
    expect(widths[0]).toBeGreaterThan(widths.at(-1)!);
    expect(widths.at(-1)!).toBeLessThan(1.5); // the tightest outbound and return legs bound it
  });

  it('says so when no single offset fits (a clock that stepped mid-run), and nothing when nothing joined', () => {
    const bound = new ServerOffsetBound();
    expect(bound.result()).toEqual({ kind: 'none', requests: 0 });
    bound.add({ sentNs: ms(0), headersNs: ms(10), serverStartNs: ms(5) });
    bound.add({ sentNs: ms(1000), headersNs: ms(1010), serverStartNs: ms(1000 + 5 + 50) }); // stepped 50 ms
    const r = bound.result();
    expect(r.kind).toBe('inconsistent');
  });
});
