import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimServer, startSim } from './server.js';
import { postJson, scrape, wordsPrompt } from './testkit.js';

const M = '{model_name="loadfleet-sim"}';

describe('a simulated vLLM replica over HTTP, with prefix caching', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSim({ enablePrefixCaching: true, scheduling: 'priority' });
  });
  afterAll(() => sim.close());

  it('hits the shared prefix of a repeated prompt in whole 16-token blocks', async () => {
    const prompt = wordsPrompt(100);
    const before = await scrape(sim.url);
    for (let i = 0; i < 2; i++) {
      const r = await postJson(`${sim.url}/v1/completions`, { prompt, max_tokens: 2, ignore_eos: true }, { 'x-sim-priority': '5' });
      expect(r.status).toBe(200);
    }
    const after = await scrape(sim.url);
    const delta = (name: string) => after.get(`${name}${M}`)! - (before.get(`${name}${M}`) ?? 0);
    expect(delta('vllm:prefix_cache_queries_total')).toBe(200);
    expect(delta('vllm:prefix_cache_hits_total')).toBe(96); // 6 of the prompt's 6 full blocks
    expect(after.get(`vllm:kv_cache_usage_perc${M}`)).toBe(0);
  });

  it('400s a non-integer x-sim-priority', async () => {
    const r = await postJson(`${sim.url}/v1/completions`, { prompt: 'x', max_tokens: 1 }, { 'x-sim-priority': 'high' });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { param: 'x-sim-priority' } });
  });
});
