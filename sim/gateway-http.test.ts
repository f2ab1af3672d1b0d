import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimServer, startSim } from './server.js';
import { parsePrometheus, postJson, postStream, sumOf, wordsPrompt } from './testkit.js';

const body = (maxTokens: number) => ({ prompt: wordsPrompt(64), max_tokens: maxTokens, stream: true, ignore_eos: true });
const text = async (url: string) => (await request(url)).body.text();

describe('engine-sim --gateway in front of a simulated vLLM replica', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSim({ gateway: true, maxConcurrency: 1, headroom: 0, queueTimeoutS: 0.2 });
  });
  afterAll(() => sim.close());

  it('streams exactly max_tokens tokens with ignore_eos, then usage and [DONE]', async () => {
    const r = await postStream(`${sim.url}/v1/completions`, { ...body(40), stream_options: { include_usage: true } });
    expect(r.events.at(-1)).toBe('[DONE]');
    expect(r.events.filter((e) => e !== '[DONE]' && JSON.parse(e).choices[0]?.text === 'tok ')).toHaveLength(40);
    expect(JSON.parse(r.events.at(-2)!).usage).toEqual({ prompt_tokens: 64, completion_tokens: 40, total_tokens: 104 });
  });

  it('answers 429 with Retry-After and the dropped reason once a queued request times out', async () => {
    const first = postStream(`${sim.url}/v1/completions`, body(120), { 'x-gateway-inference-objective': 'premium' });
    await new Promise((r) => setTimeout(r, 50));
    const startMs = performance.now();
    const dropped = await postJson(`${sim.url}/v1/completions`, body(5), {
      'x-llm-d-inference-objective': 'batch',
      'x-llm-d-inference-fairness-id': 'tenant-b',
    });
    expect(performance.now() - startMs).toBeGreaterThanOrEqual(190);
    expect(dropped.status).toBe(429);
    expect(dropped.headers['retry-after']).toBe('1');
    expect(dropped.headers['x-llm-d-request-dropped-reason']).toBe('rejected-ttl-expired');
    expect(dropped.json).toMatchObject({ error: { type: 'rate_limit_error', code: 'rejected-ttl-expired' } });
    expect((await first).events.at(-1)).toBe('[DONE]');
    const epp = parsePrometheus(await text(`${sim.url}/epp/metrics`));
    const b = 'fairness_id="tenant-b",priority="-10",inference_pool="loadfleet-sim"';
    expect(epp.get(`llm_d_epp_flow_control_request_queue_duration_seconds_count{${b},outcome="EvictedTTL"}`)).toBe(1);
    expect(epp.get(`llm_d_epp_flow_control_queue_size{${b}}`)).toBe(0);
    expect(epp.get('llm_d_epp_flow_control_queue_size{fairness_id="default",priority="100",inference_pool="loadfleet-sim"}')).toBe(0);
  });

  it('serves replica and gateway metrics apart and together, each parseable', async () => {
    const vllm = parsePrometheus(await text(`${sim.url}/vllm/metrics`));
    const epp = parsePrometheus(await text(`${sim.url}/epp/metrics`));
    const all = parsePrometheus(await text(`${sim.url}/metrics`));
    const m = '{model_name="loadfleet-sim"}';
    for (const name of [
      'vllm:num_requests_running',
      'vllm:num_requests_waiting',
      'vllm:kv_cache_usage_perc',
      'vllm:gpu_cache_usage_perc',
      'vllm:num_preemptions_total',
      'vllm:prompt_tokens_total',
      'vllm:generation_tokens_total',
      'vllm:prefix_cache_queries_total',
      'vllm:prefix_cache_hits_total',
    ]) {
      expect(vllm.has(`${name}${m}`), name).toBe(true);
      expect(all.has(`${name}${m}`), name).toBe(true);
    }
    for (const h of ['vllm:time_to_first_token_seconds', 'vllm:e2e_request_latency_seconds', 'vllm:inter_token_latency_seconds']) {
      expect(vllm.get(`${h}_count${m}`), h).toBeGreaterThan(0);
    }
    expect(vllm.get(`vllm:generation_tokens_total${m}`)).toBe(40 + 120);
    expect(sumOf(vllm, 'llm_d_epp_flow_control_pool_saturation')).toBe(0);
    expect(epp.has('llm_d_epp_flow_control_pool_saturation{inference_pool="loadfleet-sim"}')).toBe(true);
    expect(epp.has('vllm:num_requests_running{model_name="loadfleet-sim"}')).toBe(false);
    expect(all.has('llm_d_epp_average_kv_cache_utilization{inference_pool="loadfleet-sim"}')).toBe(true);
    for (const samples of [vllm, epp, all]) expect(samples.get('process_start_time_seconds')).toBeGreaterThan(0);
  });
});

describe('engine-sim --gateway --upstream', () => {
  let backend: SimServer;
  let gateway: SimServer;
  beforeAll(async () => {
    backend = await startSim({ engine: 'simple', ttftMs: 5, itlMs: 2, model: 'real-model' });
    gateway = await startSim({ gateway: true, upstream: `${backend.url}/v1`, model: 'real-model' });
  });
  afterAll(async () => {
    await gateway.close();
    await backend.close();
  });

  it('forwards requests and streams the answers back unchanged; only gateway metrics are local', async () => {
    const direct = await postStream(`${backend.url}/v1/completions`, body(6));
    const proxied = await postStream(`${gateway.url}/v1/completions`, body(6), { 'x-gateway-inference-fairness-id': 'tenant-a' });
    expect(proxied.status).toBe(200);
    expect(proxied.headers['content-type']).toBe('text/event-stream');
    // Ids and the creation second differ between two requests (a second boundary can fall between them).
    const same = (e: string): string => e.replace(/sim\w+/, '').replace(/"created":\d+/, '');
    expect(proxied.events.map(same)).toEqual(direct.events.map(same));
    const models = (await (await request(`${gateway.url}/v1/models`)).body.json()) as { data: { id: string }[] };
    expect(models.data[0]!.id).toBe('real-model');
    const bad = await postJson(`${gateway.url}/v1/completions`, { model: 'other', prompt: 'x' });
    expect(bad.status).toBe(404); // the upstream's own validation
    expect((await request(`${gateway.url}/vllm/metrics`)).statusCode).toBe(404);
    const epp = parsePrometheus(await text(`${gateway.url}/epp/metrics`));
    expect(
      epp.get(
        'llm_d_epp_flow_control_request_queue_duration_seconds_count{fairness_id="tenant-a",priority="0",inference_pool="real-model",outcome="Dispatched"}',
      ),
    ).toBe(1);
  });
});
