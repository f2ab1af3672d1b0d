// The llm-d Benchmark Report (v0.2.1) a run writes, validated against the upstream JSON Schema
// (test/fixtures/llm-d/), and its figures checked against run.json's: a team can hand a loadfleet run
// to llm-d-benchmark's tooling unchanged, and the numbers in it are loadfleet's own.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Plan } from '../shared/plan.js';
import { onlyRunDir, readRequests, readRunJson, runCoordinator, startNode, tempDir, writePlan } from './harness.js';

const SCHEMA = JSON.parse(readFileSync(new URL('./fixtures/llm-d/br_v0_2_1_json_schema.json', import.meta.url), 'utf8'));
// The schema is pydantic's: an OpenAPI `discriminator` with a mapping, which ajv refuses (the oneOf
// beside it decides the same, so it is dropped from the copy compiled), and a `ge` keyword ajv does
// not know (strict off for it); date-times checked as RFC 3339.
const withoutDiscriminators = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(withoutDiscriminators)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([k]) => k !== 'discriminator')
            .map(([k, x]) => [k, withoutDiscriminators(x)]),
        )
      : v;
const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
const ajv = new Ajv({ strict: false, allErrors: true, formats: { 'date-time': DATE_TIME } });
const validate = ajv.compile(withoutDiscriminators(SCHEMA) as object);

const phase = (rate: number) => ({ model: 'poisson' as const, phases: [{ start_s: 0, duration_s: 4, rate_per_s: rate }] });
const PLAN: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'br',
  seed: 3,
  duration_s: 4,
  drain_timeout_s: 10,
  classes: [
    { name: 'rt', prompt: { input_tokens: 64, output_tokens: 16 }, load: phase(4), slo: { ttft_p95_ms: 1000 } },
    { name: 'batch', prompt: { input_tokens: { distribution: 'uniform', min: 100, max: 300 }, output_tokens: 32 }, load: phase(2) },
  ],
};

describe('llm-d Benchmark Report', () => {
  it('every run writes one for the whole run and one per class, valid against the upstream schema, with run.json’s figures', async () => {
    const work = tempDir();
    const res = await runCoordinator(['--plan', writePlan(work, PLAN), '--agents', '2', '--out', join(work, 'out'), '--quiet']);
    expect(res.code, res.stderr).toBe(0);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    const rows = readRequests(dir);
    const read = (name: string) => {
      const yaml = parse(readFileSync(join(dir, `${name}.yaml`), 'utf8'));
      expect(JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')), 'YAML and JSON say the same').toEqual(yaml);
      expect(validate(yaml) ? [] : validate.errors, name).toEqual([]);
      return yaml;
    };
    // The compiled schema does check: a report without a run uid, or with a unit it has no name for, is refused.
    expect(validate({ version: '0.2.1', run: {}, results: {} })).toBe(false);
    const whole = read('benchmark-report');
    const wrongUnit = structuredClone(whole);
    wrongUnit.results.request_performance.aggregate.latency.time_to_first_token.units = 'fortnights';
    expect(validate(wrongUnit)).toBe(false);
    expect(whole.version).toBe('0.2.1');
    expect(whole.run.uid).toBe(run.run_id);
    const agg = whole.results.request_performance.aggregate;
    expect([agg.requests.total, agg.requests.failures]).toEqual([run.requests, run.failed]);
    expect(whole.scenario.load.standardized).toMatchObject({ tool: 'loadfleet', parallelism: 2 });
    expect(whole.scenario.load.native.config.loadfleet.slo_verdicts.rt.verdict).toBe(run.classes.rt.slo_verdict.verdict);
    // The standard has no place for a price: run.json's cost figures travel whole in the native part.
    expect(whole.scenario.load.native.config.loadfleet.cost.windows.all.total.output_tokens).toBe(run.cost.windows.all.total.output_tokens);
    // The whole run's TTFT merges both classes' histograms: its count-weighted mean is theirs.
    const ttft = (c: string) => run.classes[c].windows.all;
    const mergedMean =
      (ttft('rt').ttft_mean_ms * ttft('rt').ttft_samples + ttft('batch').ttft_mean_ms * ttft('batch').ttft_samples) /
      (ttft('rt').ttft_samples + ttft('batch').ttft_samples);
    expect(Math.abs(agg.latency.time_to_first_token.mean - mergedMean) / mergedMean).toBeLessThan(0.002); // HDR: 3 significant digits
    expect(agg.latency.time_to_first_token.units).toBe('ms');

    for (const c of ['rt', 'batch']) {
      const br = read(`benchmark-report.${c}`);
      expect(br.run.uid).toBe(`${run.run_id}/${c}`);
      const a = br.results.request_performance.aggregate;
      const w = run.classes[c].windows.all;
      // A class's report carries run.json's exact figures.
      expect([a.latency.time_to_first_token.p50, a.latency.time_to_first_token.p99, a.latency.request_latency.p95]).toEqual([
        w.ttft_p50_ms,
        w.ttft_p99_ms,
        w.e2e_p95_ms,
      ]);
      expect(a.throughput.request_rate).toEqual({ units: 'queries/s', mean: w.throughput_rps });
      // Token lengths exact from the records (nearest rank).
      const prompts = rows.filter((r) => r.class === c && r.status === 'ok').map((r) => r.prompt_tokens as number);
      prompts.sort((x, y) => x - y);
      expect(a.requests.input_length.p50).toBe(prompts[Math.ceil(0.5 * prompts.length) - 1]);
      expect([a.requests.input_length.min, a.requests.input_length.max]).toEqual([prompts[0], prompts.at(-1)]);
    }
    expect(read('benchmark-report.batch').scenario.load.standardized.input_seq_len).toEqual({
      distribution: 'uniform',
      value: 200,
      min: 100,
      max: 300,
    });

    // `coordinator benchmark-report DIR` rewrites them from the directory alone, byte for byte.
    const before = readFileSync(join(dir, 'benchmark-report.json'), 'utf8');
    const again = await startNode('coordinator/main.js', ['benchmark-report', join(work, 'out')]).done;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.split('\n').filter(Boolean)).toHaveLength(6);
    expect(readFileSync(join(dir, 'benchmark-report.json'), 'utf8')).toBe(before);
  }, 90_000);
});
