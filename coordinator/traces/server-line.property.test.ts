// Property: whatever the server's clock (offset up to ±1 s, drift up to ±1,000 ppm), the requests
// (10 ms to 120 s), the network's legs (each way on its own, 20 µs to 5 ms), and the span (ending at
// the last token, or up to 500 µs after the last write), the server's true offset lies inside the
// uncertainty the fit states, at every instant of every request; several instances under one
// service.name are told apart by their instance attribute and each holds its own truth.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clockIdentity } from './clock-key.js';
import { type JoinedStamps, ServerClockFit, SLACK_LIMIT_NS } from './server-line.js';

// Generated cases per property (LOADFLEET_SOAK=1: ten times as many).
const RUNS = process.env.LOADFLEET_SOAK === '1' ? 2000 : 200;
// Stamps are whole ns on both clocks: each bound is exact to 2 ns.
const ROUNDING_NS = 2;

const request = fc.record({
  at: fc.double({ min: 0, max: 1, noNaN: true }),
  durationMs: fc.oneof(fc.double({ min: 10, max: 1000, noNaN: true }), fc.double({ min: 1000, max: 120_000, noNaN: true })),
  ttftShare: fc.double({ min: 0.001, max: 0.9, noNaN: true }),
  outUs: fc.double({ min: 20, max: 5000, noNaN: true }),
  backUs: fc.double({ min: 20, max: 5000, noNaN: true }),
  // How long after its arrival the server sends the headers: at once, or with the first token.
  headersWithFirstToken: fc.boolean(),
  // 'last-token': the span ends at the last token (vLLM); 'after-write': it ends after the last write (an HTTP server span).
  spanEnd: fc.constantFrom('last-token', 'after-write'),
  tailUs: fc.double({ min: 0, max: 500, noNaN: true }),
  writeUs: fc.double({ min: 0, max: 50, noNaN: true }),
  // A span that names no first token (no event, no time_to_first_token): only ever one that ends at its last token.
  firstTokenKnown: fc.boolean(),
});

const clock = fc.record({
  offsetMs: fc.double({ min: -1000, max: 1000, noNaN: true }),
  driftPpm: fc.double({ min: -1000, max: 1000, noNaN: true }),
  requests: fc.array(request, { minLength: 1, maxLength: 40 }),
});

type Req = typeof request extends fc.Arbitrary<infer R> ? R : never;
type Clock = typeof clock extends fc.Arbitrary<infer C> ? C : never;

const ORIGIN = 1_796_000_000_000_000_000n;
const RUN_NS = 600e9;

/** The true θ (server − run, ns) at run instant t (ns from the origin). */
const theta = (k: Clock, t: number): number => k.offsetMs * 1e6 + k.driftPpm * 1e-6 * t;
const serverAt = (k: Clock, t: number): bigint => ORIGIN + BigInt(Math.round(t + theta(k, t)));
const runAt = (t: number): bigint => ORIGIN + BigInt(Math.round(t));

/** One request's client and server stamps, as they would be read; its instants (ns from the origin). */
function stamps(k: Clock, r: Req): { s: JoinedStamps; instants: number[] } {
  const sent = r.at * (RUN_NS - 130e9);
  const arrive = sent + r.outUs * 1e3;
  const dur = r.durationMs * 1e6;
  const firstToken = arrive + dur * r.ttftShare;
  const lastToken = arrive + dur;
  const headersOut = r.headersWithFirstToken ? firstToken : arrive + 1e3;
  const back = r.backUs * 1e3;
  const lastWrite = lastToken + r.writeUs * 1e3;
  const known = r.firstTokenKnown || r.spanEnd === 'after-write';
  const spanEnd = r.spanEnd === 'last-token' ? lastToken : lastWrite + r.tailUs * 1e3;
  const s: JoinedStamps = {
    sentNs: runAt(sent),
    headersNs: runAt(headersOut + back),
    firstContentNs: runAt(firstToken + back),
    doneNs: runAt(lastWrite + back),
    serverStartNs: serverAt(k, arrive),
    serverEndNs: serverAt(k, spanEnd),
    serverFirstTokenNs: known ? serverAt(k, firstToken) : null,
  };
  return { s, instants: [sent, headersOut + back, firstToken + back, lastWrite + back] };
}

let split = 0;
let total = 0;

function check(k: Clock, fit: ServerClockFit, rs: { s: JoinedStamps; instants: number[] }[]): void {
  const c = fit.result();
  total += rs.length;
  // Every bound the fit trusts holds, so a line passes them all: it never gives up.
  expect(c.kind).toBe('fitted');
  if (c.kind !== 'fitted') return;
  split += rs.length;
  for (const r of rs) {
    c.observe(r.s);
    for (const t of r.instants) {
      const truth = theta(k, t);
      expect(Math.abs(c.offsetAt(runAt(t)) - truth)).toBeLessThanOrEqual(c.uncertaintyNs + ROUNDING_NS);
      const [lo, hi] = c.rangeAt(runAt(t));
      expect(truth).toBeGreaterThanOrEqual(lo - ROUNDING_NS);
      expect(truth).toBeLessThanOrEqual(hi + ROUNDING_NS);
    }
  }
  const [dLo, dHi] = c.driftRangePpm;
  expect(k.driftPpm).toBeGreaterThanOrEqual(dLo - 1e-3);
  expect(k.driftPpm).toBeLessThanOrEqual(dHi + 1e-3);
  if (c.driftPpm !== null) expect(Math.abs(c.driftPpm - k.driftPpm)).toBeLessThanOrEqual(c.driftUncertaintyPpm! + 1e-3);
  expect(c.slackNs).toBeLessThanOrEqual(SLACK_LIMIT_NS);
}

describe("the server's clock line, generated runs", () => {
  it(`holds the true offset inside its stated uncertainty (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(clock, (k) => {
        const fit = new ServerClockFit(ORIGIN, RUN_NS);
        const rs = k.requests.map((r) => stamps(k, r));
        for (const r of rs) fit.add(r.s);
        check(k, fit, rs);
      }),
      { numRuns: RUNS, seed: 20261207 },
    );
    console.log(`server clock property: ${split} of ${total} generated requests split (their clock fitted)`);
  });

  it(`tells several instances under one service.name apart by their instance id (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.array(clock, { minLength: 2, maxLength: 4 }), fc.boolean(), (instances, byHost) => {
        // Every instance's spans, interleaved as one exporter stream would carry them.
        const fits = new Map<string, { fit: ServerClockFit; k: Clock; rs: { s: JoinedStamps; instants: number[] }[] }>();
        instances.forEach((k, i) => {
          const id = clockIdentity('vllm', `replica-${i}`, byHost ? 'host.name' : 'service.instance.id');
          const entry = fits.get(id.key) ?? { fit: new ServerClockFit(ORIGIN, RUN_NS), k, rs: [] };
          fits.set(id.key, entry);
          for (const r of k.requests) {
            const st = stamps(k, r);
            entry.fit.add(st.s);
            entry.rs.push(st);
          }
        });
        expect(fits.size).toBe(instances.length);
        for (const { fit, k, rs } of fits.values()) check(k, fit, rs);
      }),
      { numRuns: RUNS, seed: 20261208 },
    );
    // Without an instance attribute they are one key, and the run says so.
    expect(clockIdentity('vllm', null, null)).toMatchObject({ key: 'vllm', keyedBy: 'service.name' });
  });
});
