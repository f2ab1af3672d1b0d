import { describe, expect, it } from 'vitest';
import type { Plan } from '../../shared/plan.js';
import { csvField, formatValue, labelsJson } from './server-metrics-csv.js';
import { scrapeTargets } from './targets.js';

const BASE: Plan = { schema: 'loadfleet.plan/v1', name: 'p', seed: 1, duration_s: 1, classes: [] };
const SIM = { metricsUrl: 'http://s/metrics', vllmMetricsUrl: 'http://s/vllm/metrics', eppMetricsUrl: 'http://s/epp/metrics' };

describe('scrapeTargets', () => {
  it('scrapes the embedded sim engine and gateway apart every 0.5 s', () => {
    expect(scrapeTargets(BASE, SIM)).toEqual([
      { name: 'vllm', url: 'http://s/vllm/metrics', interval_s: 0.5 },
      { name: 'epp', url: 'http://s/epp/metrics', interval_s: 0.5 },
    ]);
    expect(scrapeTargets(BASE, { metricsUrl: 'http://s/metrics' })).toEqual([{ name: 'vllm', url: 'http://s/metrics', interval_s: 0.5 }]);
  });

  it("takes the plan's list when there is one, and nothing for a plan with a target and no list", () => {
    const scrape = [{ name: 'x', url: 'http://x/metrics', interval_s: 1 }];
    expect(scrapeTargets({ ...BASE, scrape }, SIM)).toEqual(scrape);
    const target = { base_url: 'http://t/v1', api: 'chat' as const, model: 'm', timeout_s: 1 };
    expect(scrapeTargets({ ...BASE, target }, undefined)).toEqual([]);
    expect(scrapeTargets({ ...BASE, target, scrape }, undefined)).toEqual(scrape);
  });
});

describe('server-metrics.csv cells', () => {
  it('quotes, sorts labels and spells special values as the exposition does', () => {
    expect(labelsJson({ z: '1', a: 'x"y' })).toBe('{"a":"x\\"y","z":"1"}');
    expect(csvField('{"a":"b,c"}')).toBe('"{""a"":""b,c""}"');
    expect(csvField('vllm:num_requests_running')).toBe('vllm:num_requests_running');
    expect([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.25].map(formatValue)).toEqual([
      'NaN',
      '+Inf',
      '-Inf',
      '0.25',
    ]);
  });
});
