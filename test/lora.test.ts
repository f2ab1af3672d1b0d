// LoRA adapters against engine-sim: a class spread over three adapter names by integer weights
// sends exactly weight/Σweights of its requests to each (seeded order, the same on every agent),
// run.json has per-adapter figures, and engine-sim (max 2 adapters loaded) loads and evicts them,
// which the scraped metrics show.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { onlyRunDir, readRequests, readRunJson, runCoordinator, startSim, tempDir, writePlan } from './harness.js';

describe('LoRA adapters', () => {
  let sim: { baseUrl: string; stop(): void };
  beforeAll(async () => {
    sim = await startSim(['--lora-modules', 'sql,chatbot,code', '--max-loras', '2', '--lora-load-ms', '30']);
  });
  afterAll(() => sim?.stop());

  it('splits a class over adapters exactly by weight and shows their loads in scraped metrics', { timeout: 120_000 }, async () => {
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'lora',
      seed: 11,
      duration_s: 3,
      drain_timeout_s: 10,
      target: { base_url: sim.baseUrl, api: 'chat', model: 'loadfleet-sim', timeout_s: 10 },
      scrape: [{ name: 'vllm', url: sim.baseUrl.replace(/\/v1$/, '/vllm/metrics'), interval_s: 0.5 }],
      classes: [
        {
          name: 'mix',
          adapters: [
            { model: 'sql', weight: 3 },
            { model: 'chatbot', weight: 2 },
            { model: 'code', weight: 1 },
          ],
          prompt: { input_tokens: 32, output_tokens: 8 },
          // 30 arrivals: 5 whole cycles of 6, so the split is exactly 15 / 10 / 5.
          load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 3, rate_per_s: 10 }] },
        },
      ],
    };
    const work = tempDir();
    const res = await runCoordinator(['--agents', '2', '--plan', writePlan(work, plan), '--out', join(work, 'out'), '--quiet']);
    expect(res.code, res.stderr).toBe(0);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    const rows = readRequests(dir);
    expect(rows).toHaveLength(30);
    const count = (m: string) => rows.filter((r) => r.model === m).length;
    expect([count('sql'), count('chatbot'), count('code')]).toEqual([15, 10, 5]);
    expect(rows.every((r) => r.status === 'ok')).toBe(true);
    const a = run.classes.mix.adapters;
    expect(a.sql).toMatchObject({ weight: 3, scheduled: 15, requests: 15, completed: 15, failed: 0 });
    expect(a.chatbot).toMatchObject({ weight: 2, scheduled: 10, requests: 10, completed: 10 });
    expect(a.code).toMatchObject({ weight: 1, scheduled: 5, requests: 5, completed: 5 });
    expect(a.code.ttft_mean_ms).toBeGreaterThan(0);
    expect(run.field_definitions['classes.<c>.adapters']).toMatch(/LoRA/);
    // Three adapters, two slots: loads (each 30 ms before its request reaches the engine) and evictions, scraped.
    const post = readdirSync(dir).find((f) => f.startsWith('vllm') && f.includes('post') && f.endsWith('.prom'))!;
    const text = readFileSync(join(dir, post), 'utf8');
    for (const name of ['sql', 'chatbot', 'code']) {
      const loads = Number(new RegExp(`loadfleet_sim_lora_loads_total\\{[^}]*lora_name="${name}"\\} (\\d+)`).exec(text)?.[1]);
      expect(loads, name).toBeGreaterThanOrEqual(1);
    }
    expect(Number(/loadfleet_sim_lora_evictions_total\{[^}]*\} (\d+)/.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/vllm:lora_requests_info\{[^}]*max_lora="2"/);
  });
});
