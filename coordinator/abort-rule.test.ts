import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../shared/metrics.js';
import { blankRecord } from '../shared/metrics.js';
import type { TrafficClass } from '../shared/plan.js';
import { validatePlan } from '../shared/plan-validate.js';
import { AbortWatch } from './abort-rule.js';

const S = 1e9;
const MS = 1e6;
const cls = { name: 'rt', slo: { ttft_p95_ms: 100 } } as TrafficClass;

function ended(atS: number, ok: boolean, ttftMs = 50): RequestRecord {
  const sent = atS * S - 200 * MS;
  return ok
    ? {
        ...blankRecord('rt', 0, sent),
        status: 'ok',
        sent_ns: sent,
        first_content_ns: sent + ttftMs * MS,
        first_output_ns: sent + ttftMs * MS,
        done_ns: atS * S,
      }
    : { ...blankRecord('rt', 0, sent), status: 'http_error', http_status: 429, sent_ns: sent, done_ns: atS * S };
}

/** `perS` records ending in each 0.1 s step of [fromS, toS), made by `make`. */
function stream(fromS: number, toS: number, make: (t: number, i: number) => RequestRecord): RequestRecord[] {
  const out: RequestRecord[] = [];
  for (let i = 0, t = fromS; t < toS; i++, t = Math.round((t + 0.1) * 10) / 10) out.push(make(t, i));
  return out;
}

describe('abort rules', () => {
  it('fires once the error share stays above its limit for for_s, naming the rule, class and figures', () => {
    const w = new AbortWatch({ error_share_above: 0.5, for_s: 2, window_s: 2, min_requests: 5 }, { classes: [cls] });
    w.add(stream(0, 10, (t, i) => ended(t, t < 3 || i % 10 === 0))); // healthy until 3 s, then 90% rejected
    const fired = [3, 4, 5, 6, 7, 8].map((t) => [t, w.check(t * S)] as const).find(([, why]) => why !== null);
    // At 4 s the window 2–4 s still holds a healthy second (45% failed); above 50% from the check at 5 s, for 2 s: 7 s.
    expect(fired?.[0]).toBe(7);
    expect(fired?.[1]).toMatch(
      /^abort rule abort\.error_share_above: class rt failed \d+ of \d+ requests \(\d+\.\d% > 50%\) for 2 s \(window 2 s\)$/,
    );
  });

  it('resets when the limit is not exceeded at a check, and judges nothing below min_requests', () => {
    const w = new AbortWatch({ error_share_above: 0.5, for_s: 2, window_s: 1 }, { classes: [cls] });
    w.add(stream(0, 1, () => ended(0.5, false)).slice(0, 9)); // 9 failures: fewer than 10 judge nothing
    expect(w.check(1 * S)).toBeNull();
    w.add(stream(1, 2, () => ended(1.5, false)));
    expect(w.check(2 * S)).toBeNull(); // exceeded since 2 s
    w.add(stream(2, 3, (t) => ended(t, true)));
    expect(w.check(3 * S)).toBeNull(); // healthy: reset
    w.add(stream(3, 6.1, (t) => ended(t, false)));
    expect(w.check(4 * S)).toBeNull();
    expect(w.check(5 * S)).toBeNull();
    expect(w.check(6 * S)).toMatch(/error_share_above/);
  });

  it('fires on a rolling p95 beyond a multiple of the SLO bound', () => {
    const w = new AbortWatch({ p95_over_slo: 3, for_s: 1 }, { classes: [cls] });
    w.add(stream(0, 5, (t) => ended(t, true, t < 2 ? 50 : 400)));
    expect(w.check(2 * S)).toBeNull();
    expect(w.check(4 * S)).toBeNull(); // window 0–4 s: p95 400 ms > 300 ms since this check
    expect(w.check(5 * S)).toBe(
      'abort rule abort.p95_over_slo: class rt rolling p95 ttft 400.0 ms > 3 × its bound 100 ms for 1 s (window 5 s)',
    );
  });

  it('rank failed requests +∞ in the rolling p95: fast successes beside 429s still exceed it', () => {
    // 80% rejected, the successes fast: the successful-only p95 is 50 ms, but the failures hold the p95.
    const w = new AbortWatch({ p95_over_slo: 3, for_s: 1, window_s: 2 }, { classes: [cls] });
    w.add(stream(0, 4, (t, i) => ended(t, i % 5 === 0, 50)));
    expect(w.check(2 * S)).toBeNull();
    expect(w.check(3 * S)).toBe(
      'abort rule abort.p95_over_slo: class rt rolling p95 ttft a failed request (16 of 20 failed, ranked +∞) > 3 × its bound 100 ms for 1 s (window 2 s)',
    );
    // 1 failure in 20 (5%) does not hold the p95: it falls on a fast success, nothing fires.
    const few = new AbortWatch({ p95_over_slo: 3, for_s: 1, window_s: 2 }, { classes: [cls] });
    few.add(stream(0, 4, (t, i) => ended(t, i % 20 !== 7, 50)));
    expect([2, 3, 4].map((t) => few.check(t * S))).toEqual([null, null, null]);
  });

  it('are validated: something to stop on, and a bound to multiply', () => {
    const plan = (abort: unknown, slo?: unknown) => ({
      schema: 'loadfleet.plan/v1',
      name: 'a',
      seed: 1,
      duration_s: 10,
      abort,
      classes: [
        {
          name: 'rt',
          prompt: { input_tokens: 8, output_tokens: 4 },
          ...(slo ? { slo } : {}),
          load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 10, rate_per_s: 1 }] },
        },
      ],
    });
    const problems = (p: unknown) => {
      const r = validatePlan(p);
      return r.ok ? [] : r.problems;
    };
    expect(problems(plan({ error_share_above: 0.5, for_s: 5 }))).toEqual([]);
    expect(problems(plan({ for_s: 5 }))).toEqual(['abort: needs error_share_above or p95_over_slo (nothing to stop on)']);
    expect(problems(plan({ p95_over_slo: 3, for_s: 5 }))).toEqual([
      'abort.p95_over_slo: no class declares a latency bound (slo.ttft_p95_ms, tpot_p95_ms or e2e_p95_ms) to multiply',
    ]);
    expect(problems(plan({ p95_over_slo: 3, for_s: 5 }, { ttft_p95_ms: 100 }))).toEqual([]);
  });
});
