import { describe, expect, it } from 'vitest';
import { formatDuration, formatFigure, formatMs, formatNum, formatPct } from '../shared/format.js';
import type { RequestRecord } from '../shared/metrics.js';
import { blankRecord } from '../shared/metrics.js';
import type { Slo } from '../shared/plan.js';
import { SeriesValues } from './exact/series-values.js';
import { goodputFigures } from './goodput.js';
import { classVerdict, verdictLine, windowVerdict } from './slo-verdict.js';
import { WindowStats } from './window-stats.js';

const SLO: Slo = { ttft_p95_ms: 250, success_rate_min: 0.99 };
const MS = 1e6;

/** A successful request sent at 0 whose first token came after `ttftMs` and that ended 100 ms later. */
function ok(ttftMs: number, i = 0): RequestRecord {
  return {
    ...blankRecord('rt', i, 0),
    status: 'ok',
    http_status: 200,
    sent_ns: 0,
    first_output_ns: ttftMs * MS,
    first_content_ns: ttftMs * MS,
    done_ns: (ttftMs + 100) * MS,
    completion_tokens: 11,
    output_token_source: 'usage', // a counted output: TPOT is defined
  };
}

function rejected(i = 0): RequestRecord {
  return { ...blankRecord('rt', i, 0), status: 'http_error', http_status: 429, sent_ns: 0, done_ns: 1 * MS };
}

function window(records: RequestRecord[], slo: Slo = SLO): WindowStats {
  const values = new SeriesValues();
  const w = new WindowStats(0, 10e9, slo, values);
  for (const r of records) w.add(r);
  w.setExact(values.summaries());
  return w;
}

/** 100 requests: `slow` of them at 251 ms, the rest at `fastMs`. */
function hundred(slow: number, fastMs = 250): RequestRecord[] {
  return Array.from({ length: 100 }, (_, i) => ok(i < 100 - slow ? fastMs : 251, i));
}

describe('SLO verdict per window', () => {
  it('a p95 exactly at its bound and a success rate exactly at its minimum are met', () => {
    // 100 requests, one 429: success 99% = the minimum; p95 (rank 95 of 99 successes) is 250 ms.
    const records = [...hundred(4).slice(0, 99), rejected(99)];
    const v = windowVerdict(SLO, window(records));
    expect(v.verdict).toBe('met');
    // Failures rank +∞: 100 ranked, rank 95 is the 95th of 99 successes (4 at 251 ms come after it).
    expect(v.criteria).toEqual([
      {
        criterion: 'ttft_p95_ms',
        figure: 250,
        bound: 250,
        comparison: '<=',
        met: true,
        on_failure: false,
        ranked: 100,
        failed: 1,
        unmeasured: 0,
        reason: null,
      },
      { criterion: 'success_rate_min', figure: 0.99, bound: 0.99, comparison: '>=', met: true, reason: null },
    ]);
  });

  it('one request more past the bound misses the p95', () => {
    // 5 slow of 100: rank 95 is still 250 ms; 6 slow: rank 95 is 251 ms.
    expect(windowVerdict(SLO, window(hundred(5))).verdict).toBe('met');
    const missed = windowVerdict(SLO, window(hundred(6)));
    expect(missed.verdict).toBe('missed');
    expect(missed.criteria[0]).toMatchObject({ figure: 251, met: false });
  });

  it('one failed request more misses the success rate', () => {
    const records = [...hundred(0).slice(0, 98), rejected(98), rejected(99)];
    const v = windowVerdict(SLO, window(records));
    expect(v.verdict).toBe('missed');
    expect(v.criteria[1]).toMatchObject({ figure: 0.98, met: false });
    expect(v.criteria[0]!.met).toBe(true);
  });

  it('a window with no requests is not evaluable, and does not decide the class', () => {
    const v = windowVerdict(SLO, window([]));
    expect(v).toMatchObject({ verdict: 'not_evaluable', requests: 0, reason: 'no request of the class fell in this window' });
    expect(v.criteria.every((c) => c.figure === null && c.met === null)).toBe(true);
    const cls = classVerdict(
      SLO,
      new Map([
        ['all', window(hundred(0))],
        ['baseline', window([])],
      ]),
    );
    expect(cls.verdict).toBe('met');
    expect(classVerdict(SLO, new Map([['all', window([])]])).verdict).toBe('not_evaluable');
  });

  it('requests that all failed miss a latency bound even without success_rate_min', () => {
    const v = windowVerdict({ ttft_p95_ms: 250 }, window([rejected(0), rejected(1)], { ttft_p95_ms: 250 }));
    expect(v.verdict).toBe('missed');
    expect(v.criteria).toEqual([
      {
        criterion: 'ttft_p95_ms',
        figure: null,
        bound: 250,
        comparison: '<=',
        met: false,
        on_failure: true,
        ranked: 2,
        failed: 2,
        unmeasured: 0,
        reason: null,
      },
    ]);
  });

  it('judges TPOT and e2e bounds on their own figures', () => {
    // tpot = (done − first output) / (tokens − 1) = 100 ms / 10 = 10 ms; e2e = ttft + 100 ms.
    const slo = { tpot_p95_ms: 10, e2e_p95_ms: 349 };
    const v = windowVerdict(slo, window([ok(250)], slo));
    expect(v.criteria).toMatchObject([
      { criterion: 'tpot_p95_ms', figure: 10, met: true },
      { criterion: 'e2e_p95_ms', figure: 350, met: false },
    ]);
    expect(v.verdict).toBe('missed');
  });
});

describe('failures count against latency bounds', () => {
  const TTFT_ONLY: Slo = { ttft_p95_ms: 500 };

  it('98 of 100 requests rejected with 429 miss a latency-only SLO, though the 2 successes were fast', () => {
    const records = [ok(10, 0), ok(10, 1), ...Array.from({ length: 98 }, (_, i) => rejected(i + 2))];
    const v = windowVerdict(TTFT_ONLY, window(records, TTFT_ONLY));
    expect(v.verdict).toBe('missed');
    expect(v.criteria[0]).toMatchObject({ figure: null, met: false, on_failure: true, ranked: 100, failed: 98 });
    const cls = classVerdict(TTFT_ONLY, new Map([['all', window(records, TTFT_ONLY)]]));
    expect(verdictLine('rt', cls)).toBe('rt: SLO MISSED over the whole run — p95 TTFT a failed request (98 of 100 failed) > 500 ms');
  });

  it('5 failures of 100 leave the p95 on a success; 6 put it on a failure', () => {
    const five = [...hundred(0, 100).slice(0, 95), ...Array.from({ length: 5 }, (_, i) => rejected(95 + i))];
    expect(windowVerdict(TTFT_ONLY, window(five, TTFT_ONLY)).criteria[0]).toMatchObject({ figure: 100, met: true });
    const six = [...hundred(0, 100).slice(0, 94), ...Array.from({ length: 6 }, (_, i) => rejected(94 + i))];
    expect(windowVerdict(TTFT_ONLY, window(six, TTFT_ONLY)).criteria[0]).toMatchObject({ figure: null, on_failure: true, met: false });
  });

  it('a slow tail plus failures is ranked together: 3 slow and 3 failed of 100 miss', () => {
    // 94 at 250 ms, 3 at 251 ms, 3 rejected. Successful-only, the p95 (rank 93 of 97) would be
    // 250 ms and met; with the failures ranked on top, rank 95 of 100 is 251 ms.
    const records = [...Array.from({ length: 97 }, (_, i) => ok(i < 94 ? 250 : 251, i)), rejected(97), rejected(98), rejected(99)];
    const v = windowVerdict(SLO, window(records));
    expect(v.criteria[0]).toMatchObject({ figure: 251, met: false, on_failure: false });
  });
});

describe('the unmeasurable is not_evaluable, never missed', () => {
  const TPOT: Slo = { tpot_p95_ms: 50, success_rate_min: 0.99 };

  it('TPOT of 100 successes streamed without usage or tokenizer (chunk counts) is not evaluable, with the reason', () => {
    const records = Array.from({ length: 100 }, (_, i) => ({ ...ok(10, i), output_token_source: 'chunks' as const }));
    const v = windowVerdict(TPOT, window(records, TPOT));
    expect(v.verdict).toBe('not_evaluable');
    expect(v.criteria[0]).toMatchObject({ criterion: 'tpot_p95_ms', met: null, figure: null, unmeasured: 100 });
    expect(v.reason).toBe(
      'p95 TPOT: TPOT needs 2 or more counted output tokens; of 100 successful requests, 100 without counted output tokens (no usage and no tokenizer: chunk estimates)',
    );
    expect(v.criteria[1]).toMatchObject({ criterion: 'success_rate_min', met: true });
    const cls = classVerdict(TPOT, new Map([['all', window(records, TPOT)]]));
    expect(cls).toMatchObject({ verdict: 'not_evaluable', missed_in: [], not_evaluable_in: ['all'] });
    expect(verdictLine('rt', cls)).toMatch(/^rt: SLO not evaluable — p95 TPOT: TPOT needs 2 or more counted output tokens/);
    // Goodput does not hold the unmeasurable bound against a request: all 100 were good.
    expect(window(records, TPOT).goodInside).toBe(100);
  });

  it('1-token outputs leave TPOT not evaluable', () => {
    const records = Array.from({ length: 10 }, (_, i) => ({ ...ok(10, i), completion_tokens: 1 }));
    const v = windowVerdict(TPOT, window(records, TPOT));
    expect(v.verdict).toBe('not_evaluable');
    expect(v.reason).toMatch(/10 with a 1-token output/);
  });

  it('no first content token leaves TTFT not evaluable', () => {
    const records = Array.from({ length: 4 }, (_, i) => ({ ...ok(10, i), first_content_ns: null }));
    const v = windowVerdict({ ttft_p95_ms: 100 }, window(records, { ttft_p95_ms: 100 }));
    expect(v.verdict).toBe('not_evaluable');
    expect(v.reason).toBe('p95 TTFT: no successful request had a first content token (4 of 4 without one)');
  });

  it('a missed criterion beside an unevaluable one is still missed; the class names where it could not judge', () => {
    const records = [
      ...Array.from({ length: 90 }, (_, i) => ({ ...ok(10, i), output_token_source: 'chunks' as const })),
      ...Array.from({ length: 10 }, (_, i) => rejected(90 + i)),
    ];
    expect(windowVerdict(TPOT, window(records, TPOT)).verdict).toBe('missed');
  });

  it('90 of 100 rejected with 429 beside 10 one-token answers miss a TPOT-only SLO: the failures decide the p95', () => {
    const tpotOnly: Slo = { tpot_p95_ms: 50 };
    const records = [
      ...Array.from({ length: 10 }, (_, i) => ({ ...ok(10, i), completion_tokens: 1 })),
      ...Array.from({ length: 90 }, (_, i) => rejected(10 + i)),
    ];
    const v = windowVerdict(tpotOnly, window(records, tpotOnly));
    expect(v.verdict).toBe('missed');
    expect(v.criteria[0]).toMatchObject({
      figure: null,
      met: false,
      on_failure: true,
      ranked: 90,
      failed: 90,
      unmeasured: 10,
      reason: null,
    });
    const cls = classVerdict(tpotOnly, new Map([['all', window(records, tpotOnly)]]));
    expect(verdictLine('rt', cls)).toBe('rt: SLO MISSED over the whole run — p95 TPOT a failed request (90 of 100 failed) > 50 ms');
  });

  it('5 failures of 100 beside unmeasured successes do not decide the p95: not evaluable, never missed; 6 do', () => {
    const tpotOnly: Slo = { tpot_p95_ms: 50 };
    const withFailures = (failed: number) => [
      ...Array.from({ length: 100 - failed }, (_, i) => ({ ...ok(10, i), completion_tokens: 1 })),
      ...Array.from({ length: failed }, (_, i) => rejected(100 - failed + i)),
    ];
    const five = windowVerdict(tpotOnly, window(withFailures(5), tpotOnly));
    expect(five.verdict).toBe('not_evaluable');
    expect(five.criteria[0]).toMatchObject({ met: null, on_failure: false, failed: 5, unmeasured: 95 });
    expect(five.reason).toMatch(/95 with a 1-token output.*the 5 failed of 100 requests \(ranked \+∞\) are too few/);
    expect(windowVerdict(tpotOnly, window(withFailures(6), tpotOnly)).criteria[0]).toMatchObject({ met: false, on_failure: true });
  });

  it('measured and unmeasured successes with a few failures: a p95 the failures do not decide is not pinned on them', () => {
    // 90 measured at 10 ms TPOT, 6 one-token, 4 rejected of 100: ranked (measured + failed) 94, its
    // p95 rank 90 is the last measured value, so the bound is judged on it.
    const mix = (measured: number, oneToken: number, failed: number) => [
      ...Array.from({ length: measured }, (_, i) => ok(10, i)),
      ...Array.from({ length: oneToken }, (_, i) => ({ ...ok(10, measured + i), completion_tokens: 1 })),
      ...Array.from({ length: failed }, (_, i) => rejected(measured + oneToken + i)),
    ];
    const tpotOnly: Slo = { tpot_p95_ms: 50 };
    expect(windowVerdict(tpotOnly, window(mix(90, 6, 4), tpotOnly)).criteria[0]).toMatchObject({ figure: 10, met: true });
    // 2 measured, 93 one-token, 5 rejected: ranked 7, its rank 7 is a failure, yet 5 of 100 do not decide it.
    const open = windowVerdict(tpotOnly, window(mix(2, 93, 5), tpotOnly));
    expect(open.criteria[0]).toMatchObject({ met: null, on_failure: false, ranked: 7, failed: 5, unmeasured: 93 });
    expect(open.verdict).toBe('not_evaluable');
  });

  it('all requests failed: a TPOT bound is missed (failures rank +∞), not unevaluable', () => {
    const v = windowVerdict(TPOT, window([rejected(0), rejected(1)], TPOT));
    expect(v.criteria[0]).toMatchObject({ met: false, on_failure: true });
  });
});

describe('SLO verdict per class and its line', () => {
  it('is missed when any window missed, naming the first plan window with its figures', () => {
    const slow = Array.from({ length: 20 }, (_, i) => ok(10_423.4, i));
    const v = classVerdict(
      SLO,
      new Map([
        ['all', window([...hundred(0), ...slow])],
        ['baseline', window([])],
        ['surge', window(slow)],
      ]),
    );
    expect(v.verdict).toBe('missed');
    expect(v.missed_in).toEqual(['all', 'surge']);
    expect(verdictLine('realtime', v)).toBe(
      'realtime: SLO MISSED in surge (also the whole run) — p95 TTFT 10,423 ms > 250 ms; success 100% ≥ 99%',
    );
  });

  it('says met with the whole run figures, and not evaluable with the reason', () => {
    const met = classVerdict(SLO, new Map([['all', window(hundred(0, 185))]]));
    expect(verdictLine('realtime', met)).toBe(
      'realtime: SLO met in every window — p95 TTFT 185 ms ≤ 250 ms; success 100% ≥ 99% (whole run)',
    );
    const none = classVerdict(SLO, new Map([['all', window([])]]));
    expect(verdictLine('realtime', none)).toBe('realtime: SLO not evaluable — no request of the class fell in this window');
  });
});

describe('goodput', () => {
  it('counts successful requests meeting every per-request bound, per second of the window', () => {
    // 94 at 250 ms (good), 6 at 251 ms (too slow), 2 rejected: 94 good of 102 over 10 s.
    const w = window([...hundred(6), rejected(100), rejected(101)], { ttft_p95_ms: 250, e2e_p95_ms: 350 });
    expect(goodputFigures(w.goodInside, 10)).toEqual({ goodput_requests: 94, goodput_rps: 9.4 });
    // Every bound counts: with e2e ≤ 349 ms no request is good (each took ttft + 100 ms ≥ 350 ms).
    const strict = window(hundred(0), { ttft_p95_ms: 250, e2e_p95_ms: 349 });
    expect(goodputFigures(strict.goodInside, 10).goodput_requests).toBe(0);
    expect(goodputFigures(0, 0).goodput_rps).toBeNull();
  });

  it('is on throughput_rps basis: a good request that finishes after the window ends counts in neither, so goodput ≤ throughput', () => {
    // Sent inside a 0–10 s window; 3 of 10 finish at 10.05 s (after the end), all meet the bound.
    const slo: Slo = { ttft_p95_ms: 250 };
    const values = new SeriesValues();
    const w = new WindowStats(0, 10e9, slo, values);
    for (let i = 0; i < 10; i++) {
      const r = ok(50, i);
      const late = i < 3;
      w.add({
        ...r,
        sent_ns: late ? 9.9e9 : 0,
        first_content_ns: (late ? 9.9e9 : 0) + 50 * MS,
        first_output_ns: (late ? 9.9e9 : 0) + 50 * MS,
        done_ns: late ? 10.05e9 : 150 * MS,
      });
    }
    expect(w.finishedInside).toBe(7);
    expect(w.sloHits).toBe(10); // slo_attainment still counts every good request of the window
    expect(w.goodInside).toBe(7);
  });
});

describe('numbers for people', () => {
  it('rounds with units and separates thousands', () => {
    expect(formatMs(1978.195742)).toBe('1,978 ms');
    expect(formatMs(185.4)).toBe('185 ms');
    expect(formatMs(7.954)).toBe('7.95 ms');
    expect(formatMs(0.0434)).toBe('0.043 ms');
    expect(formatMs(null)).toBe('–');
    expect(formatDuration(1978.195742)).toBe('1.98 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
    expect(formatPct(1)).toBe('100%');
    expect(formatPct(0.99)).toBe('99%');
    expect(formatPct(0.00044)).toBe('0.04%');
    expect(formatFigure(2.75, 'req/s')).toBe('2.75 req/s');
    expect(formatFigure(12_345.6, 'tok/s')).toBe('12,346 tok/s');
    expect(formatNum(-0.0001, 2)).toBe('0');
  });
});
