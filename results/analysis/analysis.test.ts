// The seed analysis's arithmetic: its per-run rows through our aggregation must give its by_arm
// and comparison to the last decimal, on every key the seed has.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Experiment } from '../../shared/experiment.js';
import { byArm, comparison, comparisonKeys, repeatSpread } from './aggregate.js';
import { describeMetric } from './answer.js';
import { buildAnalysis } from './build.js';
import type { Row } from './rows.js';
import { runRow } from './rows.js';

const seed = JSON.parse(readFileSync(new URL('../../test/fixtures/interference-analysis.json', import.meta.url), 'utf8'));
const rows: Row[] = seed.runs;
const ARMS = ['realtime only', 'realtime with batch already running'];
const compare = { metric: 'realtime_surge_p95_ttft_ms', baseline: ARMS[0]!, treatment: ARMS[1]! };
const experiment: Pick<Experiment, 'name' | 'business_question' | 'compare' | 'gates' | 'arms' | 'claim_boundary'> = {
  name: seed.experiment,
  business_question: seed.business_question,
  compare,
  gates: { repeat_spread_max: 1.5 },
  arms: ARMS.map((name) => ({ name })),
};

/** Every key of `expected`, recursively, equal in `actual` (extra keys in `actual` are allowed). */
function expectSeedKeys(actual: any, expected: any, path: string): void {
  if (expected === null || typeof expected !== 'object') {
    expect(actual, path).toStrictEqual(expected);
    return;
  }
  for (const [k, v] of Object.entries(expected)) {
    expect(actual, `${path} exists`).toBeTypeOf('object');
    expect(Object.hasOwn(actual, k), `${path}.${k} exists`).toBe(true);
    expectSeedKeys(actual[k], v, `${path}.${k}`);
  }
}

describe('seed interference analysis', () => {
  it('by_arm to the last decimal', () => {
    expectSeedKeys(byArm(rows, ARMS, compare, 1.5), seed.by_arm, 'by_arm');
  });

  it('comparison: key names and figures (factor 115.285)', () => {
    const keys = comparisonKeys(compare.metric, ['realtime', 'batch'], ['baseline', 'surge', 'recovery']);
    expect(keys).toEqual({ difference: 'realtime_p95_ttft_increase_ms', factor: 'realtime_p95_ttft_factor' });
    const cmp = comparison(byArm(rows, ARMS, compare, 1.5), compare, keys);
    expectSeedKeys(cmp, seed.comparison, 'comparison');
    expect(cmp.realtime_p95_ttft_factor).toBe(115.285);
  });

  it('the whole document: seed keys, stability, answer', () => {
    const doc: any = buildAnalysis({
      experiment,
      planName: 'batch-interference',
      target: 'engine-sim',
      classes: ['realtime', 'batch'],
      windows: ['surge'],
      rows,
      runChecks: {},
    });
    for (const key of [
      'experiment',
      'business_question',
      'run_count',
      'all_data_quality_valid',
      'all_slo_proof_valid',
      'by_arm',
      'comparison',
      'runs',
    ]) {
      expectSeedKeys(doc[key], seed[key], key);
    }
    expect(doc.schema).toBe('loadfleet.analysis/v1');
    expect(doc.by_arm['realtime only'].repeat_spread.max_over_min).toBe(1.033); // 137.017 / 132.576 = 1.03350 (just under)
    expect(doc.by_arm['realtime only'].stable).toBe(true);
    expect(doc.gates.data_quality_not_valid).toEqual([]);
    expect(doc.answer).toContain(
      'increased from 133 ms in "realtime only" to 15,378 ms in "realtime with batch already running" (115.285×).',
    );
    expect(doc.answer).not.toContain('validity');
  });

  it('never pools: a figure missing from one repeat gives nulls, not a median of the others', () => {
    const partial = rows.map((r, i) => (i === 0 ? { ...r, realtime_surge_p95_ttft_ms: null } : r));
    const arms = byArm(partial, ARMS, compare, 1.5);
    expect(arms[ARMS[1]!]!.realtime_surge_p95_ttft_ms).toEqual({ median: null, min: null, max: null });
    expect(arms[ARMS[1]!]!.stable).toBe(false);
    expect(arms[ARMS[0]!]!.stable).toBe(true);
  });
});

describe('repeat spread', () => {
  it('needs two positive values', () => {
    expect(repeatSpread([10, 16], 'm', 1.5).max_over_min).toBe(1.6);
    expect(repeatSpread([10], 'm', 1.5).max_over_min).toBeNull();
    expect(repeatSpread([0, 1], 'm', 1.5).max_over_min).toBeNull();
  });
});

describe('rows from run.json', () => {
  const run = {
    status_counts: { '200': 10, '429': 2 },
    plan: { classes: [{ name: 'rt' }], windows: [{ name: 'surge' }] },
    classes: {
      rt: {
        windows: {
          surge: { requests: 7, ttft_p95_ms: 12.5, ttft_p99_ms: 13, tpot_p95_ms: 1, tpot_p99_ms: 2, e2e_p95_ms: 30, e2e_p99_ms: 31 },
        },
      },
    },
    server: { windows: { all: { max_vllm_running: 4, rt_epp_queue_mean_ms: 0.5, flow_control_materially_engaged: false } } },
    data_quality: { valid: true, checks: [] },
    agents: [{ agent_id: 'host-a' }, { agent_id: 'host-b' }],
  };
  it('reads the run.json keys and leaves the rest null (absent validity is not a pass)', () => {
    const row = runRow(run, '/x/run', { arm: 'a', repeat: 2 }, ['rt', 'bulk'], ['surge']);
    expect(row).toMatchObject({
      arm: 'a',
      repeat: 2,
      data_quality_valid: true,
      slo_proof_valid: null,
      http_200: 10,
      http_429: 2,
      rt_surge_requests: 7,
      rt_surge_p95_ttft_ms: 12.5,
      rt_surge_p99_latency_ms: 31,
      rt_all_p95_ttft_ms: null,
      bulk_surge_p95_ttft_ms: null,
      rt_epp_queue_mean_ms: 0.5,
      bulk_epp_queue_mean_ms: null,
      max_vllm_running: 4,
      max_vllm_waiting: null,
      flow_control_materially_engaged: false,
      run_name: 'a - repeat 2',
      run_dir: '/x/run',
      agents: 'host-a,host-b',
    });
  });
  it('describes a metric in words', () => {
    expect(describeMetric('realtime_surge_p95_ttft_ms', ['realtime'], ['surge'])).toBe('realtime median p95 TTFT in the surge window');
  });
});
