import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimServer, startSim } from './server.js';
import { parsePrometheus, postStream, scrape, sumOf } from './testkit.js';

const M = '{model_name="loadfleet-sim"}';
const body = (maxTokens: number) => ({ prompt: 'queue me please', max_tokens: maxTokens, stream: true, ignore_eos: true });

describe('admission and /metrics', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSim({ ttftMs: 20, itlMs: 5, prefillUsPerToken: 0, maxConcurrency: 2 });
  });
  afterAll(() => sim.close());

  it('exposes well-formed Prometheus text with every expected family', async () => {
    const res = await request(`${sim.url}/metrics`);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.body.text();
    const samples = parsePrometheus(text);
    for (const name of [
      'vllm:num_requests_running',
      'vllm:num_requests_waiting',
      'vllm:prompt_tokens_total',
      'vllm:generation_tokens_total',
    ]) {
      expect(samples.has(`${name}${M}`)).toBe(true);
    }
    for (const family of ['vllm:time_to_first_token_seconds', 'vllm:e2e_request_latency_seconds', 'loadfleet_sim_step_overrun_seconds']) {
      expect(text).toContain(`# TYPE ${family} histogram`);
      expect(samples.has(`${family}_bucket{model_name="loadfleet-sim",le="+Inf"}`)).toBe(true);
      expect(samples.has(`${family}_count${M}`)).toBe(true);
    }
    expect(samples.has('vllm:time_to_first_token_seconds_bucket{model_name="loadfleet-sim",le="0.001"}')).toBe(true);
    expect(samples.has('vllm:time_to_first_token_seconds_bucket{model_name="loadfleet-sim",le="80"}')).toBe(true);
    expect(text).toContain('# TYPE vllm:request_success_total counter');
    expect(samples.get('process_start_time_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
  });

  it('caps running at max_concurrency, queues the rest FCFS and counts everything', async () => {
    const before = await scrape(sim.url);
    const streams = [0, 1, 2, 3].map(() => postStream(`${sim.url}/v1/completions`, body(10)));
    let during = await scrape(sim.url);
    // Wait until all four have arrived (the first pair needs 70 ms to finish).
    while (sumOf(during, 'vllm:num_requests_running') + sumOf(during, 'vllm:num_requests_waiting') < 4) during = await scrape(sim.url);
    expect(during.get(`vllm:num_requests_running${M}`)).toBe(2);
    expect(during.get(`vllm:num_requests_waiting${M}`)).toBe(2);
    const results = await Promise.all(streams);
    const ttfts = results.map((r) => r.atMs[0]!).sort((a, b) => a - b);
    // The later two start only when a slot frees (first pair: ttft + 9 steps), then wait their own ttft.
    expect(ttfts[2]).toBeGreaterThanOrEqual(20 + 9 * 5 + 20);
    expect(ttfts[2]! - ttfts[1]!).toBeGreaterThan(30);
    const after = await scrape(sim.url);
    expect(after.get(`vllm:num_requests_running${M}`)).toBe(0);
    expect(after.get(`vllm:num_requests_waiting${M}`)).toBe(0);
    const delta = (name: string) => sumOf(after, name) - sumOf(before, name);
    expect(delta('vllm:prompt_tokens_total')).toBe(4 * 3);
    expect(delta('vllm:generation_tokens_total')).toBe(4 * 10);
    expect(delta('vllm:request_success_total')).toBe(4);
    expect(delta('vllm:time_to_first_token_seconds_count')).toBe(4);
    expect(delta('vllm:e2e_request_latency_seconds_count')).toBe(4);
    expect(after.get('vllm:time_to_first_token_seconds_bucket{model_name="loadfleet-sim",le="0.01"}')).toBe(0);
  });

  it('frees the slot of a client that disconnects mid-stream', async () => {
    const before = await scrape(sim.url);
    const controller = new AbortController();
    const gone = postStream(`${sim.url}/v1/completions`, body(1000), {}, controller.signal);
    await new Promise((r) => setTimeout(r, 60));
    expect((await scrape(sim.url)).get(`vllm:num_requests_running${M}`)).toBe(1);
    controller.abort();
    expect((await gone).error).toBeDefined();
    await new Promise((r) => setTimeout(r, 20));
    const after = await scrape(sim.url);
    expect(after.get(`vllm:num_requests_running${M}`)).toBe(0);
    const aborted = 'loadfleet_sim_requests_aborted_total{model_name="loadfleet-sim",reason="client_disconnect"}';
    expect((after.get(aborted) ?? 0) - (before.get(aborted) ?? 0)).toBe(1);
    const ok = await postStream(`${sim.url}/v1/completions`, body(2));
    expect(ok.events.at(-1)).toBe('[DONE]');
  });
});
