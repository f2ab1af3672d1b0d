import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RunReportInput } from './run-page.js';
import { renderRunReport } from './run-page.js';
import { serverSeries } from './server-series.js';

const RUN = {
  schema: 'loadfleet.run/v1',
  run_id: 'r1<script>',
  status: 'degraded',
  status_reason: 'client limited: agent-2 schedule lag p99 63.8 ms > 50 ms',
  started_at: '2026-12-02T18:32:04.159Z',
  started_at_unix_ns: 1_796_236_324_159_000_000n,
  wall_clock_ms: 11_360,
  agents: [{ agent_id: 'agent-1' }, { agent_id: 'agent-2' }],
  clock: { alignment: 'explicit-common-clock-domain' },
  experiment: { name: 'interference', arm: 'realtime only', repeat: 2 },
  plan: {
    name: 'short',
    duration_s: 12,
    classes: [{ name: 'realtime' }, { name: 'batch' }],
    windows: [{ name: 'surge', start_s: 4, end_s: 8 }],
  },
  classes: {
    realtime: {
      requests: 15,
      completed: 14,
      failed: 1,
      windows: { all: { ttft_p50_ms: 1691.877, ttft_p95_ms: 2347.762 }, surge: { ttft_p50_ms: null, ttft_p95_ms: null } },
    },
    batch: {
      requests: 22,
      completed: 22,
      failed: 0,
      windows: { all: { ttft_p50_ms: 1672.4, ttft_p95_ms: 2505 }, surge: { ttft_p50_ms: 1786.1, ttft_p95_ms: 2505 } },
    },
  },
  data_quality: {
    valid: false,
    checks: [
      { name: 'schedule kept', status: 'pass', evidence: { planned: 37, dispatched: 37 }, reason: 'every planned request dispatched' },
      { name: 'metric capture healthy', status: 'fail', evidence: { errors: 3 }, reason: '3 scrapes failed' },
      { name: 'headers honoured', status: 'not_evaluated', evidence: {}, reason: 'no gateway labels scraped' },
    ],
  },
  slo_proof: { valid: true, checks: [{ name: 'slo attainment realtime', status: 'pass', evidence: { attainment: 1 }, reason: 'ok' }] },
  server: {
    windows: {
      all: { max_vllm_running: 128, flow_control_materially_engaged: true },
      surge: { max_vllm_running: 120, flow_control_materially_engaged: null },
    },
    definitions: { max_vllm_running: 'the peak of running requests' },
  },
};

function input(over: Partial<RunReportInput> = {}): RunReportInput {
  return {
    run: RUN,
    ttft: new Map([
      [
        'realtime',
        [
          { startS: 3, lengthS: 1, count: 2, valuesMs: [100, 200] },
          { startS: 4, lengthS: 1, count: 1, valuesMs: [150, 150] },
        ],
      ],
    ]),
    traffic: [
      { cls: 'realtime', closedLoop: false, target: [[0.5, 2]], issued: [[0.5, 2]], completed: [[0.5, 0]], outstanding: [[0.5, 2]] },
    ],
    server: serverSeries(readFileSync(new URL('../../test/fixtures/server-metrics.csv', import.meta.url), 'utf8')),
    lag: [
      {
        agent: 'agent-1',
        points: [
          [0.5, 1.2],
          [1.5, 0.4],
        ],
        requests: 9,
      },
    ],
    ...over,
  };
}

describe('run report page', () => {
  const html = renderRunReport(input());

  it('is one self-contained document: no script, nothing fetched', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/\b(src|href)="(?!data:|#)/);
    expect(html.replaceAll('http://www.w3.org/2000/svg', '')).not.toMatch(/https?:\/\//);
    expect(html).toContain("default-src 'none'");
    expect(html).toContain('r1&lt;script&gt;');
  });

  it('shows status, reason, experiment and the per-class table', () => {
    expect(html).toContain('<span class="badge warn">degraded</span>');
    expect(html).toContain('client limited: agent-2 schedule lag p99 63.8 ms &gt; 50 ms');
    expect(html).toContain('experiment interference, arm “realtime only”, repeat 2');
    expect(html).toContain('surge <small>(4–8 s)</small>');
    expect(html).toContain('<td>1,692 / 2,348</td>');
    expect(html).toContain('<td>– / –</td>');
    expect(html).toMatch(/<td><strong>realtime<\/strong><\/td><td>15<\/td><td>14<\/td><td>1<\/td>/);
  });

  it('lists every check with its status and evidence, and the verdicts', () => {
    expect(html).toMatch(/Data quality <span class="badge bad">invalid<\/span>/);
    expect(html).toMatch(/SLO proof <span class="badge good">valid<\/span>/);
    expect(html).toMatch(/metric capture healthy<\/td><td><span class="badge bad">fail<\/span>/);
    expect(html).toMatch(/headers honoured<\/td><td><span class="badge none">not_evaluated<\/span>/);
    expect(html).toContain('{&quot;planned&quot;:37,&quot;dispatched&quot;:37}');
  });

  it('tabulates the server figures per window with their definitions', () => {
    expect(html).toContain('<span title="the peak of running requests">max_vllm_running</span>');
    expect(html).toMatch(/max_vllm_running<\/span><\/td><td>128<\/td><td>120<\/td>/);
    expect(html).toMatch(/flow_control_materially_engaged<\/span><\/td><td>true<\/td><td>–<\/td>/);
  });

  it('has every chart, each with data', () => {
    for (const id of ['ttft-over-time', 'traffic', 'server-queues', 'server-kv-cache', 'server-pool-saturation', 'schedule-lag'])
      expect(html).toMatch(new RegExp(`data-chart="${id}"><h3>[^<]+</h3><p class="definition">[^<]+</p><svg`));
  });

  it('says "no server metrics scraped" when server-metrics.csv is absent, and renders a bare run.json', () => {
    expect(renderRunReport(input({ server: null }))).toContain('no server metrics scraped');
    const bare = renderRunReport({ run: {}, ttft: null, traffic: null, server: null, lag: null });
    expect(bare).toContain('histograms.hlog is absent');
    expect(bare).toContain('traffic.csv is absent');
    expect(bare).toContain('requests.ndjson is absent');
    expect(bare).not.toContain('Data quality');
  });
});
