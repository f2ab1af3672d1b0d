import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { serverSeries } from './server-series.js';

const FIXTURE = readFileSync(new URL('../../test/fixtures/server-metrics.csv', import.meta.url), 'utf8');

describe('server signals from server-metrics.csv', () => {
  const s = serverSeries(FIXTURE);

  it('keeps one line per source and concept, one point per scrape', () => {
    expect(s.get('running')!.map((l) => [l.source, l.metric, l.points.length])).toEqual([['vllm', 'vllm:num_requests_running', 12]]);
    expect(s.get('running')!.at(0)!.points.slice(0, 3)).toEqual([
      [0, 0],
      [0.5, 16],
      [1, 32],
    ]);
    expect(Math.max(...s.get('waiting')![0]!.points.map((p) => p[1]))).toBe(50);
  });

  it('uses the current KV name when both are exported (no double count) and shows percent', () => {
    const kv = s.get('kv_cache_pct')!;
    expect(kv).toHaveLength(1);
    expect(kv[0]!.metric).toBe('vllm:kv_cache_usage_perc');
    expect(kv[0]!.points.at(-1)![1]).toBeCloseTo(44, 9);
  });

  it('sums the gateway queue over fairness ids within a scrape', () => {
    const q = s.get('gateway_queue')![0]!;
    // At the last scrape (i = 11): realtime max(0, 11 − 8) = 3, batch (11 − 5) × 7 = 42.
    expect(q.points.at(-1)).toEqual([5.502, 45]);
    expect(s.get('pool_saturation')![0]!.points.at(-1)).toEqual([5.502, 1.016]);
  });

  it('accepts the older gateway and KV names', () => {
    const old = [
      'elapsed_s,unix_ns,source,metric,labels_json,value',
      '1.0,1,gw,inference_extension_flow_control_pool_saturation,"{}",0.5',
      '1.0,1,pod-a,vllm:gpu_cache_usage_perc,"{}",0.25',
    ].join('\n');
    const o = serverSeries(old);
    expect(o.get('pool_saturation')![0]!.points).toEqual([[1, 0.5]]);
    expect(o.get('kv_cache_pct')![0]!.points).toEqual([[1, 25]]);
    expect(o.has('running')).toBe(false);
  });
});
