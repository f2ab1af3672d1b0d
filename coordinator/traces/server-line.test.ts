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

  it('widens bounds that cross by a little by the least slack, counts them, and says by how much', () => {
    // 200 requests on loopback legs of 20 µs; one span stamped 0.3 ms before its request left.
    const fit = new ServerClockFit(0n, Number(ms(20_000)));
    const rs: JoinedStamps[] = [];
    for (let i = 0; i < 200; i++) {
      const t = i * 100;
      const early = i === 100 ? 0.3 : 0;
      rs.push({
        sentNs: ms(t),
        headersNs: ms(t + 0.04),
        firstContentNs: ms(t + 5.04),
        doneNs: ms(t + 50.04),
        serverStartNs: ms(t + 0.02 - early),
        serverEndNs: ms(t + 50.02),
        serverFirstTokenNs: ms(t + 5.02),
      });
    }
    for (const r of rs) fit.add(r);
    const c = fit.result();
    if (c.kind !== 'fitted') throw new Error(c.kind);
    for (const r of rs) c.observe(r);
    // The bounds cross by 0.26 ms (−0.28 ms above, −0.02 ms below): each widened by half of it, and the uncertainty by as much.
    expect(c.slackNs / 1e6).toBeCloseTo(0.13, 3);
    expect(c.uncertaintyNs).toBeGreaterThanOrEqual(c.slackNs);
    // The one early span crosses the 400 bounds below it: it is the one counted, by 0.26 ms.
    const t = c.tally();
    expect(t.crossing).toBe(1);
    expect(t.crossingMaxNs / 1e6).toBeCloseTo(0.26, 3);
  });

  it('checks the end bounds of spans that name their first token, and counts those that end after the last byte', () => {
    // An HTTP server span: it ends 0.25 ms after its last write, which reaches the client 20 µs later.
    const fit = new ServerClockFit(0n, Number(ms(20_000)));
    const rs: JoinedStamps[] = Array.from({ length: 100 }, (_, i) => ({
      sentNs: ms(i * 200),
      headersNs: ms(i * 200 + 0.04),
      firstContentNs: ms(i * 200 + 5.04),
      doneNs: ms(i * 200 + 50.04),
      serverStartNs: ms(i * 200 + 0.02),
      serverEndNs: ms(i * 200 + 50.27),
      serverFirstTokenNs: ms(i * 200 + 5.02),
    }));
    for (const r of rs) fit.add(r);
    const c = fit.result();
    if (c.kind !== 'fitted') throw new Error(c.kind);
    for (const r of rs) c.observe(r);
    expect(c.slackNs).toBe(0);
    expect(Math.abs(c.offsetNs)).toBeLessThanOrEqual(c.uncertaintyNs);
    expect(c.uncertaintyNs / 1e6).toBeLessThan(0.05);
    expect(c.bounds).toMatchObject({ sent: 100, first_token: 100, end: 0, end_checked: 100 });
    const t = c.tally();
    expect(t.endCrossing).toBe(100);
    expect(t.endCrossingMaxNs / 1e6).toBeGreaterThan(0.2);
    expect(t.endCrossingMaxNs / 1e6).toBeLessThan(0.25);
  });

  it('uses the end bounds of spans that name no first token, and survives a few that cross by widening them', () => {
    // No first token in the spans; legs of 30–430 µs out and 20 µs back; 3 of 200 end 0.2–0.26 ms
    // after the client read the last byte.
    const fit = new ServerClockFit(0n, Number(ms(40_000)));
    const rs: JoinedStamps[] = Array.from({ length: 200 }, (_, i) => {
      const out = 0.03 + 0.4 * ((i * 0.618034) % 1);
      const late = i % 70 === 5 ? 0.2 + 0.03 * Math.floor(i / 70) : 0;
      return {
        sentNs: ms(i * 200),
        headersNs: ms(i * 200 + out + 0.02),
        doneNs: ms(i * 200 + out + 50.02),
        serverStartNs: ms(i * 200 + out),
        serverEndNs: ms(i * 200 + out + 50 + late),
      };
    });
    for (const r of rs) fit.add(r);
    const c = fit.result();
    if (c.kind !== 'fitted') throw new Error(c.kind);
    for (const r of rs) c.observe(r);
    expect(c.bounds).toMatchObject({ end: 200, end_checked: 0, first_token: 0 });
    expect(c.slackNs).toBeGreaterThan(0);
    expect(c.slackNs).toBeLessThan(0.15e6);
    // The three late ends are the side with fewer bounds crossing; the latest (0.24 ms above the
    // truth) crosses the fastest send's bound (about 0.03 ms above it) by about 0.21 ms.
    expect(c.tally().crossing).toBe(3);
    expect(c.tally().crossingMaxNs / 1e6).toBeGreaterThan(0.2);
    expect(c.tally().crossingMaxNs / 1e6).toBeLessThan(0.22);
    expect(c.uncertaintyNs).toBeGreaterThanOrEqual(c.slackNs);
  });
});
