import { describe, expect, it } from 'vitest';
import type { Plan } from '../../shared/plan.js';
import type { Sample } from './derive.js';
import { classQueueMeanMs, counterDelta, deriveFigures, fairnessPriorities, maxOfSums, valueIn } from './derive.js';
import { parseExposition } from './prom-parse.js';
import { classFairness, serverBlock } from './server-block.js';
import type { ScrapeRecord } from './types.js';

function sample(source: string, elapsedS: number, text: string): Sample {
  const p = parseExposition(text);
  if (p.problems.length > 0) throw new Error(p.problems.join('\n'));
  return { source, elapsedS, series: p.samples, families: new Set(p.types.keys()) };
}

const Q = 'llm_d_epp_flow_control_request_queue_duration_seconds';
function epp(
  t: number,
  o: { rtSum: number; rtCount: number; bSum: number; bCount: number; sat: number; q: [number, number]; start?: number },
): Sample {
  return sample(
    'epp',
    t,
    [
      `# TYPE ${Q} histogram`,
      `${Q}_sum{fairness_id="rt",priority="100",outcome="Dispatched"} ${o.rtSum}`,
      `${Q}_count{fairness_id="rt",priority="100",outcome="Dispatched"} ${o.rtCount}`,
      `${Q}_sum{fairness_id="batch",priority="-10",outcome="Dispatched"} ${o.bSum}`,
      `${Q}_count{fairness_id="batch",priority="-10",outcome="Dispatched"} ${o.bCount}`,
      `llm_d_epp_flow_control_queue_size{fairness_id="rt",priority="100"} ${o.q[0]}`,
      `llm_d_epp_flow_control_queue_size{fairness_id="batch",priority="-10"} ${o.q[1]}`,
      `llm_d_epp_flow_control_pool_saturation{inference_pool="p"} ${o.sat}`,
      `process_start_time_seconds ${o.start ?? 1000}`,
    ].join('\n'),
  );
}

describe('derived server figures', () => {
  it('computes the seed-style figures from known samples', () => {
    const samples = [
      sample(
        'vllm',
        0,
        'vllm:num_requests_running{e="0"} 3\nvllm:num_requests_running{e="1"} 4\nvllm:num_requests_waiting 0\nvllm:kv_cache_usage_perc 0.2\nvllm:gpu_cache_usage_perc 0.2\nvllm:num_preemptions_total 5',
      ),
      epp(0, { rtSum: 0, rtCount: 0, bSum: 0, bCount: 0, sat: 0.5, q: [0, 0] }),
      sample(
        'vllm',
        1,
        'vllm:num_requests_running{e="0"} 10\nvllm:num_requests_running{e="1"} 2\nvllm:num_requests_waiting 7\nvllm:kv_cache_usage_perc 0.44359\nvllm:num_preemptions_total 5',
      ),
      epp(1, { rtSum: 0.5, rtCount: 2, bSum: 10, bCount: 4, sat: 1.015625, q: [1, 6] }),
      sample(
        'vllm',
        2,
        'vllm:num_requests_running{e="0"} 1\nvllm:num_requests_running{e="1"} 1\nvllm:num_requests_waiting 2\nvllm:gpu_cache_usage_perc 0.9\nvllm:num_preemptions_total 8',
      ),
      epp(2, { rtSum: 1.1, rtCount: 4, bSum: 30, bCount: 5, sat: 0.9, q: [0, 2] }),
    ];
    const f = deriveFigures(samples, [
      { name: 'realtime', fairnessId: 'rt' },
      { name: 'batch', fairnessId: 'batch' },
      { name: 'other', fairnessId: null },
    ]);
    expect(f).toEqual({
      max_vllm_running: 12,
      max_vllm_waiting: 7,
      max_vllm_kv_cache_usage_pct: 90, // the old name only where the new one is absent: never 0.2 + 0.2
      vllm_preemptions_delta: 3,
      vllm_prefix_cache_queries_delta: null,
      vllm_prefix_cache_hits_delta: null,
      vllm_spec_decode_drafts_delta: null,
      vllm_spec_decode_draft_tokens_delta: null,
      vllm_spec_decode_accepted_tokens_delta: null,
      vllm_prefix_cache_hit_rate: null,
      vllm_spec_decode_acceptance_rate: null,
      vllm_spec_decode_mean_acceptance_length: null,
      max_epp_queue: 7,
      max_pool_saturation: 1.015625,
      epp_queue_count_delta: 9,
      epp_queue_seconds_delta: 31.1,
      realtime_epp_queue_mean_ms: 275, // 1.1 s / 4 × 1000
      batch_epp_queue_mean_ms: 6000, // 30 / 5 × 1000
      other_epp_queue_mean_ms: null,
      flow_control_materially_engaged: true,
      gateway_restarts: 0,
    });
  });

  it("reads the server's prefix-cache hit rate and speculative-decoding acceptance from its counters", () => {
    const at = (t: number, q: number, h: number, d: number, dt: number, a: number) =>
      sample(
        'vllm',
        t,
        `vllm:prefix_cache_queries_total ${q}\nvllm:prefix_cache_hits_total ${h}\nvllm:spec_decode_num_drafts_total ${d}\nvllm:spec_decode_num_draft_tokens_total ${dt}\nvllm:spec_decode_num_accepted_tokens_total ${a}`,
      );
    // Over the window: 1,000 tokens looked up, 250 hit; 100 drafts of 3 tokens, 180 accepted.
    const f = deriveFigures([at(0, 500, 100, 10, 30, 20), at(1, 1000, 200, 60, 180, 120), at(2, 1500, 350, 110, 330, 200)], []);
    expect(f).toMatchObject({
      vllm_prefix_cache_hit_rate: 0.25,
      vllm_spec_decode_drafts_delta: 100,
      vllm_spec_decode_acceptance_rate: 0.6,
      vllm_spec_decode_mean_acceptance_length: 2.8,
    });
  });

  it('is null where nothing shows the signal, and not engaged below saturation', () => {
    expect(deriveFigures([], [{ name: 'a', fairnessId: 'a' }])).toMatchObject({
      max_vllm_running: null,
      max_pool_saturation: null,
      a_epp_queue_mean_ms: null,
      flow_control_materially_engaged: null,
      gateway_restarts: null,
    });
    const calm = [
      epp(0, { rtSum: 0, rtCount: 0, bSum: 0, bCount: 0, sat: 0.2, q: [0, 0] }),
      epp(1, { rtSum: 0.01, rtCount: 3, bSum: 0, bCount: 0, sat: 0.9, q: [0, 0] }),
    ];
    expect(deriveFigures(calm, [])).toMatchObject({ flow_control_materially_engaged: false, epp_queue_count_delta: 3 });
  });

  it('counts a restart, clamps a counter reset at zero and sums sources carrying values forward', () => {
    const restarted = [
      epp(0, { rtSum: 5, rtCount: 5, bSum: 0, bCount: 0, sat: 1, q: [0, 0] }),
      epp(1, { rtSum: 1, rtCount: 1, bSum: 0, bCount: 0, sat: 1, q: [0, 0], start: 2000 }),
    ];
    expect(deriveFigures(restarted, [])).toMatchObject({ gateway_restarts: 1, epp_queue_count_delta: 0 });
    const two = [sample('a', 0, 'g 5'), sample('b', 0.1, 'g 1'), sample('a', 1, 'g 2'), sample('b', 1.1, 'g 9')];
    expect(maxOfSums(two, (s) => valueIn(s, ['g']))).toBe(11); // 2 (a, carried) + 9
    expect(counterDelta(two, (s) => valueIn(s, ['g']))).toBe(8); // a: max(0, −3) + b: 8
  });

  it('reads a histogram declared before its first series as 0 and the old gateway names', () => {
    const before = sample('epp', 0, `# TYPE ${Q} histogram`);
    const old = sample(
      'epp',
      1,
      'inference_extension_flow_control_request_queue_duration_seconds_sum{fairness_id="rt"} 2\ninference_extension_flow_control_request_queue_duration_seconds_count{fairness_id="rt"} 4',
    );
    // The old-name sample has no new-name family, so it reads the old one: 2/4 s from a 0 start... per source.
    expect(classQueueMeanMs([before, sample('epp', 1, `${Q}_sum{fairness_id="rt"} 2\n${Q}_count{fairness_id="rt"} 4`)], 'rt')).toBe(500);
    expect(
      classQueueMeanMs(
        [
          sample(
            'epp',
            0,
            'inference_extension_flow_control_request_queue_duration_seconds_count{fairness_id="rt"} 0\ninference_extension_flow_control_request_queue_duration_seconds_sum{fairness_id="rt"} 0',
          ),
          old,
        ],
        'rt',
      ),
    ).toBe(500);
  });

  it('lists the priorities seen per fairness id', () => {
    const m = fairnessPriorities([epp(0, { rtSum: 0, rtCount: 0, bSum: 0, bCount: 0, sat: 0, q: [0, 0] })]);
    expect([...m.get('rt')!]).toEqual(['100']);
    expect([...m.get('batch')!]).toEqual(['-10']);
  });
});

describe('server block', () => {
  const plan: Plan = {
    schema: 'loadfleet.plan/v1',
    name: 'p',
    seed: 1,
    duration_s: 10,
    target: { base_url: 'http://x/v1', api: 'chat', model: 'm', timeout_s: 5, headers: { 'X-Gateway-Inference-Fairness-Id': 'shared' } },
    classes: [
      {
        name: 'a',
        headers: { 'x-llm-d-inference-fairness-id': 'tenant-a' },
        prompt: { input_tokens: 1, output_tokens: 1 },
        load: { model: 'poisson', phases: [] },
      },
      { name: 'b', prompt: { input_tokens: 1, output_tokens: 1 }, load: { model: 'poisson', phases: [] } },
    ],
    windows: [{ name: 'w', start_s: 1, end_s: 2 }],
  };

  it('takes fairness ids from class headers, then target headers, any case', () => {
    expect(classFairness(plan)).toEqual([
      { name: 'a', fairnessId: 'tenant-a' },
      { name: 'b', fairnessId: 'shared' },
    ]);
  });

  it('summarises capture health per source and derives per window', () => {
    const rec = (kind: ScrapeRecord['kind'], tick: number | null, t: number, text: string | null, lagMs = 1): ScrapeRecord => ({
      source: 'vllm',
      kind,
      tick,
      startUnixNs: 0n,
      elapsedS: t,
      lagMs: kind === 'tick' ? lagMs : null,
      durationMs: 2,
      httpStatus: text === null ? null : 200,
      error: text === null ? { kind: 'timeout', message: 'no answer in 400 ms' } : null,
      series: text === null ? null : parseExposition(text).samples,
      families: new Set(),
    });
    const block = serverBlock(plan, [
      {
        name: 'vllm',
        url: 'http://x/metrics',
        intervalS: 0.5,
        skippedTicks: 1,
        records: [
          rec('pre', null, -0.5, 'vllm:num_requests_running 0'),
          rec('tick', 0, 0, 'vllm:num_requests_running 9', 3),
          rec('tick', 2, 1, null, 7),
          rec('tick', 3, 1.5, 'vllm:num_requests_running 4', 2),
          rec('post', null, 11, 'vllm:num_requests_running 0'),
        ],
      },
    ]) as any;
    expect(block.sources[0]).toMatchObject({
      ticks_due: 4,
      scrapes: 3,
      samples_ok: 2,
      errors: 1,
      error_counts: { timeout: 1 },
      skipped_ticks: 1,
      pre_snapshot: 'ok',
      post_snapshot: 'ok',
      lag_max_ms: 7,
      duration_max_ms: 2,
      restarts: null,
    });
    expect(block.windows.all.max_vllm_running).toBe(9);
    expect(block.windows.w.max_vllm_running).toBe(4);
    expect(block.definitions.a_epp_queue_mean_ms).toMatch(/tenant-a/);
  });
});
