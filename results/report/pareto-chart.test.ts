import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { armPareto } from '../../figures/cost/arm-cost.js';
import type { StageCost } from '../../figures/cost/sweep-cost.js';
import { sweepPareto } from '../../figures/cost/sweep-cost.js';
import { renderExperimentReport } from './experiment-page.js';
import type { Obj } from './fields.js';
import { renderParetoChart } from './pareto-chart.js';
import type { SweepDoc } from './sweep-page.js';
import { sweepReportHtml } from './sweep-page.js';

function cost(perUser: number, perAccelerator: number): StageCost {
  return {
    usd_per_hour: 98.32,
    accelerators: { type: 'H100-80GB', count: 8 },
    output_tok_s: perAccelerator * 8,
    input_tok_s: perAccelerator * 32,
    output_tok_s_per_accelerator: perAccelerator,
    input_tok_s_per_accelerator: perAccelerator * 4,
    output_tok_s_per_user: perUser,
    usd_per_million_output_tokens: (98.32 / (perAccelerator * 8 * 3600)) * 1e6,
    usd_per_million_input_tokens: (98.32 / (perAccelerator * 32 * 3600)) * 1e6,
  };
}

const STAGES = [
  { index: 0, value: 2, measurement: 1, verdict: 'pass', cost: cost(90, 40) },
  { index: 1, value: 4, measurement: 1, verdict: 'pass', cost: cost(70, 75) },
  { index: 2, value: 8, measurement: 1, verdict: 'fail', cost: cost(20, 110) },
  { index: 3, value: 6, measurement: 1, verdict: 'client_limited', cost: cost(60, 60) },
  { index: 4, value: 5, measurement: 1, verdict: 'fail', cost: cost(50, 70) },
];

describe('the Pareto chart', () => {
  const pareto = sweepPareto(STAGES, 'req/s');

  it('draws one labelled point per plotted stage, the SLO-meeting ones filled, and both fronts', () => {
    expect(pareto.front).toEqual(['8 req/s', '4 req/s', '2 req/s']);
    expect(pareto.slo_front).toEqual(['4 req/s', '2 req/s']);
    const html = renderParetoChart(pareto, 'sweep-pareto', 'stage');
    expect(html).toContain('data-chart="sweep-pareto"');
    expect(html.match(/<g class="point" /g)).toHaveLength(4);
    for (const label of ['2 req/s', '4 req/s', '8 req/s', '5 req/s']) expect(html).toContain(`data-label="${label}"`);
    expect(html).toContain('data-label="8 req/s" data-meets-slo="false"');
    expect(html).toContain('data-label="2 req/s" data-meets-slo="true"');
    // A missed point is hollow: white fill, coloured ring.
    expect(html).toMatch(/data-label="5 req\/s"[^>]*><circle [^>]*fill="#fff"/);
    expect(html.match(/<polyline class="pareto-front" points="([^"]+)"/)![1]!.split(' ')).toHaveLength(3);
    expect(html.match(/<polyline class="pareto-slo-front" points="([^"]+)"/)![1]!.split(' ')).toHaveLength(2);
    expect(html).toContain('Not plotted: 6 req/s (verdict client_limited');
  });

  it('says why there is nothing to draw instead of empty axes', () => {
    const html = renderParetoChart(
      sweepPareto([{ index: 0, value: 1, measurement: 1, verdict: 'pass', cost: null }], 'req/s'),
      'p',
      'stage',
    );
    expect(html).not.toContain('<svg');
    expect(html).toContain('No stage has both a per-user rate and a throughput to plot.');
  });

  it('is on the sweep page with the stage cost table', () => {
    const doc = {
      name: 's',
      class: 'rt',
      unit: 'req/s',
      scale: 'rate',
      stages: STAGES.map((s) => ({
        ...s,
        reason: s.verdict,
        achieved_rps: 1,
        scheduled_rps: 1,
        offered_rps: 1,
        ttft_p50_ms: 1,
        ttft_p95_ms: 1,
        ttft_p99_ms: 1,
        tpot_p95_ms: 1,
        success_rate: 1,
        run_dir: null,
      })),
      capacity: 4,
      bracket: [4, 5],
      knee: { value: null },
      slo: {},
      answer: 'a',
      stop_reason: 'done',
      pareto,
    } as unknown as SweepDoc;
    const html = sweepReportHtml(doc);
    expect(html).toContain('<h2>Cost and the Pareto front</h2>');
    expect(html).toContain('data-chart="sweep-pareto"');
    expect(html.match(/<svg /g)).toHaveLength(3);
    expect(html).toContain('<th>$ per 1M output tokens</th>');
    // 98.32 $/h over 4 req/s's 600 output tok/s: 45.518519 $ per million output tokens.
    expect(html).toContain('45.519');
  });

  it('is on the experiment page, one point per arm at its medians', () => {
    const seed = JSON.parse(readFileSync(new URL('../../test/fixtures/interference-analysis.json', import.meta.url), 'utf8')) as Obj;
    const byArm = {
      alone: {
        output_tok_s_per_user: { median: 80, min: 79, max: 81 },
        output_tok_s_per_accelerator: { median: 50, min: 1, max: 1 },
        slo_verdict: { rt: { verdict: 'met' } },
      },
      shared: {
        output_tok_s_per_user: { median: 40, min: 1, max: 1 },
        output_tok_s_per_accelerator: { median: 90, min: 1, max: 1 },
        slo_verdict: { rt: { verdict: 'missed' } },
      },
    };
    const p = armPareto(byArm);
    expect(p).toMatchObject({ y: 'output_tok_s_per_accelerator', front: ['shared', 'alone'], slo_front: ['alone'] });
    const html = renderExperimentReport({ analysis: { ...seed, pareto: p }, runLinks: [] });
    expect(html).toContain('data-chart="experiment-pareto"');
    expect(html).toContain('data-label="shared" data-meets-slo="false"');
  });
});
