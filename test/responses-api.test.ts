// suite: timing
// The Responses API against engine-sim: its typed events are timed as chat's deltas are (reasoning
// summary deltas first, then output text), usage comes from response.completed/incomplete, and a
// chat class and a responses class sharing one engine in one run see the same TTFT.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan, TrafficClass } from '../shared/plan.js';
import { runPlanToEnd, startSim } from './harness.js';

function cls(name: string, api: 'chat' | 'responses', offsetS: number): TrafficClass {
  return {
    name,
    api,
    prompt: { input_tokens: 40, output_tokens: 12 },
    // Interleaved arrivals (0.1 s apart) at a rate the engine serves without queueing.
    load: { model: 'constant-rate', phases: [{ start_s: offsetS, duration_s: 2, rate_per_s: 5 }] },
  };
}

describe('the Responses API', () => {
  let sim: { baseUrl: string; stop(): void };
  beforeAll(async () => {
    sim = await startSim(['--reasoning-tokens', '3', '--ttft-ms', '20', '--itl-ms', '10']);
  });
  afterAll(() => sim?.stop());

  it('times output_text deltas like chat content: same TTFT as chat on the same engine, ttfo from reasoning summaries', async () => {
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'responses-vs-chat',
      seed: 5,
      duration_s: 2.2,
      drain_timeout_s: 5,
      target: { base_url: sim.baseUrl, api: 'chat', model: 'loadfleet-sim', timeout_s: 5 },
      classes: [cls('chat', 'chat', 0), cls('resp', 'responses', 0.1)],
    };
    const { run, rows } = await runPlanToEnd(plan, ['--agents', '2']);
    const resp = rows.filter((r) => r.class === 'resp');
    expect(resp).toHaveLength(10);
    for (const row of resp) {
      expect(row.status).toBe('ok');
      // 3 reasoning summary deltas, then 9 output_text deltas; usage from the final event.
      expect(row.reasoning_chunks).toBe(3);
      expect(row.content_chunks).toBe(9);
      expect(row.completion_tokens).toBe(12);
      expect(row.prompt_tokens).toBe(40);
      expect(row.output_token_source).toBe('usage');
      expect(row.first_content_unix_ns - row.first_output_unix_ns).toBeGreaterThan(10_000_000n);
    }
    const chat = run.classes.chat.windows.all;
    const r = run.classes.resp.windows.all;
    // engine-sim quantises the first token to its 10 ms step: the two APIs' medians may differ by a step at most.
    expect(Math.abs(r.ttft_p50_ms - chat.ttft_p50_ms)).toBeLessThanOrEqual(10);
    expect(r.ttft_p50_ms - r.ttfo_p50_ms).toBeGreaterThan(25);
    expect(r.itl_p50_ms).toBeGreaterThan(5);
    expect(r.itl_p50_ms).toBeLessThan(20);
    expect(r.tpot_p50_ms).toBeGreaterThan(5);
    expect(run.plan.prompt_calibration.resp).toMatchObject({ counted_prompt_tokens: 40 });
  });
});
