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
    expect(v.criteria).toEqual([
      { criterion: 'ttft_p95_ms', figure: 250, bound: 250, comparison: '<=', met: true },
      { criterion: 'success_rate_min', figure: 0.99, bound: 0.99, comparison: '>=', met: true },
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
    expect(v.criteria).toEqual([{ criterion: 'ttft_p95_ms', figure: null, bound: 250, comparison: '<=', met: false }]);
  });

  it('judges TPOT and e2e bounds on their own figures', () => {
    // tpot = (done − first output) / (tokens − 1) = 100 ms / 10 = 10 ms; e2e = ttft + 100 ms.
    const v = windowVerdict({ tpot_p95_ms: 10, e2e_p95_ms: 349 }, window([ok(250)], {}));
    expect(v.criteria).toMatchObject([
      { criterion: 'tpot_p95_ms', figure: 10, met: true },
      { criterion: 'e2e_p95_ms', figure: 350, met: false },
    ]);
    expect(v.verdict).toBe('missed');
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
    expect(goodputFigures(w.sloHits, 10)).toEqual({ goodput_requests: 94, goodput_rps: 9.4 });
    // Every bound counts: with e2e ≤ 349 ms no request is good (each took ttft + 100 ms ≥ 350 ms).
    const strict = window(hundred(0), { ttft_p95_ms: 250, e2e_p95_ms: 349 });
    expect(goodputFigures(strict.sloHits, 10).goodput_requests).toBe(0);
    expect(goodputFigures(0, 0).goodput_rps).toBeNull();
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
