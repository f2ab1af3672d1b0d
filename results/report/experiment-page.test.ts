import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { armValues, comparedFigure, keyFigures, renderExperimentReport, spreadFigures } from './experiment-page.js';
import type { Obj } from './fields.js';

const SEED = JSON.parse(readFileSync(new URL('../../test/fixtures/interference-analysis.json', import.meta.url), 'utf8')) as Obj;

describe('experiment report from the seed analysis', () => {
  it('recovers the compared figure and the arms from the comparison keys', () => {
    expect(comparedFigure(SEED)).toEqual({
      metric: 'realtime_surge_p95_ttft_ms',
      baseline: 'realtime only',
      treatment: 'realtime with batch already running',
    });
    expect(comparedFigure({ ...SEED, compare: { metric: 'max_vllm_running', baseline: 'b', treatment: 't' } })).toEqual({
      metric: 'max_vllm_running',
      baseline: 'b',
      treatment: 't',
    });
    expect(spreadFigures(SEED)).toHaveLength(14);
  });

  it('charts the compared figure’s class-and-window siblings and the server figures, and folds the rest', () => {
    const figures = [
      'realtime_all_p95_ttft_ms',
      'realtime_surge_p95_ttft_ms',
      'realtime_surge_p99_tpot_ms',
      'batch_surge_p95_ttft_ms',
      'max_vllm_running',
      'batch_epp_queue_mean_ms',
    ];
    expect(keyFigures(figures, 'realtime_surge_p95_ttft_ms')).toEqual({
      key: ['realtime_surge_p95_ttft_ms', 'realtime_surge_p99_tpot_ms', 'max_vllm_running', 'batch_epp_queue_mean_ms'],
      rest: ['realtime_all_p95_ttft_ms', 'batch_surge_p95_ttft_ms'],
    });
    expect(keyFigures(spreadFigures(SEED), 'realtime_surge_p95_ttft_ms').rest).toEqual([]);
  });

  it('takes each repeat from runs[] in repeat order, beside the arm medians', () => {
    const v = armValues(SEED, 'realtime_surge_p95_ttft_ms');
    expect(v.map((a) => a.arm)).toEqual(['realtime only', 'realtime with batch already running']);
    expect(v[0]).toMatchObject({ median: 133.395, min: 132.576, max: 137.017 });
    expect(v[0]!.repeats.map((r) => r.value)).toEqual([137.017, 133.395, 132.576]);
    expect(v[1]!.repeats.map((r) => r.value)).toEqual([15378.459, 15919.173, 15168.291]);
  });

  const html = renderExperimentReport({
    analysis: SEED,
    runLinks: SEED.runs ? (SEED.runs as unknown[]).map((_, i) => (i === 0 ? 'runs/a/report.html' : null)) : [],
  });

  it('shows the question, the answer, the comparison with exact figures and every run', () => {
    expect(html).toContain('How much does batch work already running in vLLM increase realtime latency?');
    expect(html).toContain('realtime median p95 TTFT increased from 133 ms to 15,378 ms');
    expect(html).toContain('<strong>115.285×</strong>');
    expect(html).toContain('<strong>15,245.064</strong>');
    expect(html).toContain('133.395 <small>[132.576 – 137.017]</small>');
    expect(html).toContain('<a href="runs/a/report.html">realtime with batch already running - repeat 1</a>');
    expect((html.match(/<tr>/g) ?? []).length).toBe(1 + 2 + 1 + 14 + 1 + 6);
  });

  it('draws the compared figure twice (shared and per-arm axes) and every other figure once, each with its repeats', () => {
    const charts = [...html.matchAll(/data-chart="(arm-[^"]+)"/g)].map((m) => m[1]);
    expect(charts).toHaveLength(2 + 13);
    expect(charts.slice(0, 2)).toEqual(['arm-compare', 'arm-compare-detail']);
    const compare = html.slice(html.indexOf('data-chart="arm-compare"'), html.indexOf('data-chart="arm-compare-detail"'));
    expect((compare.match(/<circle class="repeat"/g) ?? []).length).toBe(6);
    expect(compare).toContain('log scale');
    expect((html.match(/<circle class="repeat"/g) ?? []).length).toBe(6 * 15);
    expect(html).not.toMatch(/<script/i);
  });

  it('renders a sparse analysis without inventing anything', () => {
    const sparse = renderExperimentReport({ analysis: { experiment: 'x' }, runLinks: [] });
    expect(sparse).toContain('no {median, min, max} figure to compare');
    expect(sparse).not.toContain('<h2>Runs</h2>');
  });

  it('shows each arm’s SLO verdict per class with its run counts', () => {
    const html = renderExperimentReport({
      analysis: {
        experiment: 'x',
        by_arm: {
          alone: { runs: 3, slo_verdict: { realtime: { verdict: 'met', runs_met: 3, runs_missed: 0, runs_not_evaluable: 0 } } },
          batch: { runs: 3, slo_verdict: { realtime: { verdict: 'missed', runs_met: 0, runs_missed: 3, runs_not_evaluable: 0 } } },
        },
      },
      runLinks: [],
    });
    expect(html).toContain('<th>SLO verdict</th>');
    expect(html).toContain('realtime: <span class="badge good">SLO met</span> <small>(all 3 runs)</small>');
    expect(html).toContain('realtime: <span class="badge bad">SLO MISSED</span> <small>(3 of 3 runs)</small>');
  });
});
