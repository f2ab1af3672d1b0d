import { describe, expect, it } from 'vitest';
import { renderRunReport } from './run-page.js';
import { TtftByIntended, ttftFields } from './ttft-intended-series.js';

const VERDICT = {
  verdict: 'missed',
  missed_in: ['all', 'surge'],
  windows: {
    all: {
      verdict: 'missed',
      requests: 104,
      criteria: [
        { criterion: 'ttft_p95_ms', figure: 10177.4, bound: 250, comparison: '<=', met: false },
        { criterion: 'success_rate_min', figure: 1, bound: 0.99, comparison: '>=', met: true },
      ],
      reason: null,
    },
    baseline: { verdict: 'not_evaluable', requests: 0, criteria: [], reason: 'no request of the class fell in this window' },
    surge: {
      verdict: 'missed',
      requests: 77,
      criteria: [{ criterion: 'ttft_p95_ms', figure: 10423.2, bound: 250, comparison: '<=', met: false }],
      reason: null,
    },
  },
};

const RUN = {
  run_id: 'r-slo',
  status: 'completed',
  wall_clock_ms: 71_500,
  plan: { name: 'p', duration_s: 60, classes: [{ name: 'realtime' }], windows: [{ name: 'surge', start_s: 15, end_s: 45 }] },
  classes: {
    realtime: {
      requests: 104,
      completed: 104,
      failed: 0,
      slo_verdict: VERDICT,
      windows: { all: { goodput_rps: 0.1, throughput_rps: 1.733 }, surge: { goodput_rps: 0, throughput_rps: 0 } },
    },
  },
  data_quality: { valid: true, checks: [] },
  slo_proof: { valid: true, checks: [] },
  field_definitions: { 'classes.<c>.windows.<w>.goodput_rps': 'good requests per second' },
};

describe('the run report leads with the SLO verdict', () => {
  const html = renderRunReport({
    run: RUN,
    ttft: new Map([['realtime', [{ startS: 70, lengthS: 1, count: 3, valuesMs: [9000, 10_000] }]]]),
    ttftByIntended: new Map([['realtime', [{ startS: 30, lengthS: 1, count: 3, valuesMs: [9000, 10_400] }]]]),
    traffic: null,
    server: null,
    lag: null,
  });

  it('puts the verdict before the class table and the gates, in the CLI words', () => {
    const verdictAt = html.indexOf('id="slo-verdict"');
    expect(verdictAt).toBeGreaterThan(0);
    expect(verdictAt).toBeLessThan(html.indexOf('<h2>Classes</h2>'));
    expect(verdictAt).toBeLessThan(html.indexOf('<h2>Data quality'));
    expect(html).toContain('realtime: SLO MISSED in surge (also the whole run) — p95 TTFT 10,423 ms &gt; 250 ms');
    expect(html).toContain('no request of the class fell in this window');
    expect(html).toContain('0.1 req/s');
    expect(html).toContain('not whether the SLOs were met');
  });

  it('stretches every time axis to the end of the drain and shades the drain', () => {
    const tos = [...html.matchAll(/data-x-to="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(tos.length).toBeGreaterThanOrEqual(2);
    for (const to of tos) expect(to).toBeGreaterThanOrEqual(71.5);
    expect(html).toMatch(/<g class="band drain"[^>]*>.*?drain<\/text>/);
    expect(html).toContain('data-chart="ttft-by-intended"');
  });
});

describe('TTFT by intended send time', () => {
  it('bins successful open-loop requests by the second they were meant to be sent', () => {
    const start = 1_000_000_000_000n;
    const acc = new TtftByIntended(start);
    const row = (intendedS: number, ttftMs: number, status = 'ok') =>
      `{"agent_id":"a","class":"rt","request_index":0,"status":"${status}","http_status":200,"intended_unix_ns":${start + BigInt(intendedS * 1e9)},"sent_unix_ns":${start + BigInt(intendedS * 1e9)},"first_content_unix_ns":${start + BigInt(intendedS * 1e9 + ttftMs * 1e6)}}`;
    for (const line of [row(2.1, 100), row(2.9, 300), row(2.5, 9999, 'timeout'), row(40.2, 20)]) {
      const t = ttftFields(line);
      const at = BigInt(line.match(/"intended_unix_ns":(\d+)/)![1]!);
      acc.add(t.cls, t.ok, at, at, t.firstContentNs);
    }
    expect(acc.percentiles().get('rt')).toEqual([
      { startS: 2, lengthS: 1, count: 2, valuesMs: [100, 300] },
      { startS: 40, lengthS: 1, count: 1, valuesMs: [20, 20] },
    ]);
  });
});
