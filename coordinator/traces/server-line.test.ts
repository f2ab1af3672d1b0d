import { describe, expect, it } from 'vitest';
import { type JoinedStamps, ServerClockFit } from './server-line.js';

const ms = (x: number): bigint => BigInt(Math.round(x * 1e6));

/** A seeded stream of requests to a server whose clock reads `theta(t)` ahead of the run's. */
function requests(n: number, theta: (tMs: number) => number, seed = 7): { stamps: JoinedStamps; tMs: number }[] {
  let s = seed;
  const rand = (): number => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  const out: { stamps: JoinedStamps; tMs: number }[] = [];
  for (let i = 0; i < n; i++) {
    const tMs = (600_000 * i) / n;
    const outbound = 0.2 + 3 * rand(); // unknown one-way legs, different each way
    const serverTtft = 1 + 40 * rand();
    const back = 0.2 + 3 * rand();
    const decode = 50 + 200 * rand();
    const arrive = tMs + outbound;
    out.push({
      tMs,
      stamps: {
        sentNs: ms(tMs),
        headersNs: ms(arrive + 0.5 + back), // headers leave the server at once, the first token later
        doneNs: ms(arrive + serverTtft + decode + back),
        serverStartNs: ms(arrive + theta(arrive)),
        serverEndNs: ms(arrive + serverTtft + decode + theta(arrive + serverTtft + decode)),
      },
    });
  }
  return out;
}

describe("the server's clock line from joined requests", () => {
  it.each([
    ['a constant offset', (_t: number) => 37.25],
    ['an offset drifting 40 ppm', (t: number) => -1200 + 40e-6 * t],
  ])('holds the true offset within its stated uncertainty at every request (%s)', (_name, theta) => {
    const rs = requests(2000, theta);
    const fit = new ServerClockFit(0n, Number(ms(600_000)));
    for (const r of rs) fit.add(r.stamps);
    const c = fit.result();
    if (c.kind !== 'fitted') throw new Error(c.kind);
    expect(c.model).toBe('line');
    expect(c.requests).toBe(2000);
    for (const r of rs) expect(Math.abs(c.offsetAt(ms(r.tMs)) - Number(ms(theta(r.tMs))))).toBeLessThanOrEqual(c.uncertaintyNs + 1e3);
    // The tightest legs of 2,000 requests bound it to a fraction of the legs' 0.2–3.2 ms.
    expect(c.uncertaintyNs / 1e6).toBeLessThan(1);
    const truePpm = ((theta(1000) - theta(0)) / 1000) * 1e6;
    expect(Math.abs(c.driftPpm! - truePpm)).toBeLessThanOrEqual(c.driftUncertaintyPpm! + 1e-9);
  });

  it('says a drift one request cannot bound is unbounded, and holds the offset for any drift within the limit', () => {
    const [r] = requests(1, () => 5);
    const fit = new ServerClockFit(0n, 1e9);
    fit.add(r!.stamps);
    const c = fit.result();
    if (c.kind !== 'fitted') throw new Error(c.kind);
    expect(c.model).toBe('drift-unbounded');
    expect(c.driftPpm).toBeNull();
    expect(c.driftUncertaintyPpm).toBeNull();
    expect(Math.abs(c.offsetNs - 5e6)).toBeLessThanOrEqual(c.uncertaintyNs);
  });

  it('says so when no line fits (a clock that stepped mid-run), and nothing when nothing joined', () => {
    expect(new ServerClockFit(0n, 1e9).result()).toEqual({ kind: 'none', requests: 0 });
    const fit = new ServerClockFit(0n, Number(ms(600_000)));
    for (const r of requests(400, (t) => (t < 300_000 ? 0 : 80))) fit.add(r.stamps);
    expect(fit.result().kind).toBe('inconsistent');
  });
});
