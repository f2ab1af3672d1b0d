// The Anthropic Messages API end to end: a real coordinator and agents load engine-sim's
// /v1/messages with the key in x-api-key, and every request's usage (input tokens from
// message_start, output tokens from message_delta, the cache's reads folded in) is exactly what
// was planned and what engine-sim charged; thinking deltas are timed as reasoning, text deltas as
// content. Sessions send their conversation as `messages`, and a later turn reads its earlier
// turns from the prefix cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { runPlanToEnd, startSim } from './harness.js';

const KEY_ENV = 'LOADFLEET_TEST_ANTHROPIC_KEY';

describe('the Anthropic Messages API', () => {
  let sim: { baseUrl: string; stop(): void };
  beforeAll(async () => {
    sim = await startSim(['--reasoning-tokens', '3', '--enable-prefix-caching']);
    process.env[KEY_ENV] = 'test-key';
  });
  afterAll(() => {
    sim?.stop();
    delete process.env[KEY_ENV];
  });

  it('counts every request token-exact from usage split over two events, and times thinking as reasoning', {
    timeout: 120_000,
  }, async () => {
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'anthropic-messages',
      seed: 11,
      duration_s: 2.2,
      drain_timeout_s: 10,
      target: { base_url: sim.baseUrl, api: 'anthropic', model: 'loadfleet-sim', timeout_s: 10, api_key_env: KEY_ENV, require_usage: true },
      classes: [
        {
          name: 'msg',
          prompt: { input_tokens: 40, output_tokens: 12 },
          load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 2, rate_per_s: 5 }] },
        },
        {
          name: 'turns',
          prompt: { output_tokens: 6 },
          load: {
            model: 'sessions',
            phases: [{ start_s: 0, duration_s: 1, rate_per_s: 3 }],
            session: { turns: 2, think_time_s: 0.1, user_tokens: 40 },
          },
        },
      ],
    };
    const { run, rows } = await runPlanToEnd(plan, ['--agents', '2']);
    const msg = rows.filter((r) => r.class === 'msg');
    expect(msg).toHaveLength(10);
    for (const row of msg) {
      expect(row.status).toBe('ok');
      // 3 thinking deltas, then 9 text deltas; usage: 40 in, 12 out, from message_start and message_delta.
      expect(row.reasoning_chunks).toBe(3);
      expect(row.content_chunks).toBe(9);
      expect(row.prompt_tokens).toBe(40);
      expect(row.planned_prompt_tokens).toBe(40);
      expect(row.completion_tokens).toBe(12);
      expect(row.output_token_source).toBe('usage');
      expect(row.first_content_unix_ns).toBeGreaterThan(row.first_output_unix_ns);
    }
    expect(run.plan.prompt_calibration.msg).toMatchObject({ counted_prompt_tokens: 40 });

    const turns = rows.filter((r) => r.class === 'turns');
    expect(turns.length).toBeGreaterThan(3);
    for (const r of turns) expect([r.status, r.completion_tokens]).toEqual(['ok', 6]);
    for (const r of turns.filter((t) => t.turn === 1)) expect(r.prompt_tokens).toBe(r.planned_prompt_tokens);
    const later = turns.filter((t) => t.turn === 2);
    expect(later.length).toBeGreaterThan(0);
    for (const r of later) {
      const first = turns.find((t) => t.session_id === r.session_id && t.turn === 1);
      // The whole conversation is sent again: the first turn, its 6-token reply and the new turn.
      expect(r.prompt_tokens).toBeGreaterThan(first.prompt_tokens + 6);
      // Its first turn's full 16-token blocks are read from the cache (Anthropic's cache_read_input_tokens).
      expect(r.cached_tokens).toBeGreaterThanOrEqual(16);
    }
    expect(run.failed).toBe(0);
    const r = run.classes.msg.windows.all;
    expect(r.ttft_p50_ms).toBeGreaterThan(r.ttfo_p50_ms);
    console.log(
      `anthropic: ${msg.length} requests 40 in / 12 out exact, ${turns.length} session turns; TTFO p50 ${r.ttfo_p50_ms} ms, TTFT p50 ${r.ttft_p50_ms} ms, ITL p50 ${r.itl_p50_ms} ms`,
    );
  });

  it('offers tools, loops their results back as tool_result blocks, and sends images as base64 blocks', { timeout: 120_000 }, async () => {
    const load = { model: 'constant-rate' as const, phases: [{ start_s: 0, duration_s: 2, rate_per_s: 4 }] };
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'anthropic-tools',
      seed: 12,
      duration_s: 2.2,
      drain_timeout_s: 10,
      target: { base_url: sim.baseUrl, api: 'anthropic', model: 'loadfleet-sim', timeout_s: 10, api_key_env: KEY_ENV },
      classes: [
        { name: 'call', prompt: { input_tokens: 40, output_tokens: 8, tools: [{ name: 'lookup' }], tool_choice: 'required' }, load },
        {
          name: 'loop',
          prompt: { output_tokens: 6, tools: [{ name: 'search' }], tool_choice: 'required', tool_loop: true },
          load: {
            model: 'sessions',
            phases: [{ start_s: 0, duration_s: 1, rate_per_s: 2 }],
            session: { turns: 3, think_time_s: 0.1, user_tokens: 30 },
          },
        },
        { name: 'seeing', prompt: { input_tokens: 40, output_tokens: 4, images: { count: 1, width: 112, height: 56 } }, load },
      ],
    };
    const { run, rows } = await runPlanToEnd(plan, ['--agents', '2']);
    expect(run.failed).toBe(0);
    const calls = rows.filter((r) => r.class === 'call');
    expect(calls).toHaveLength(8);
    // 3 thinking tokens, then the call's 5 argument fragments; the block start is its head, not a token.
    for (const r of calls)
      expect(r).toMatchObject({
        status: 'ok',
        tool_calls: 1,
        tool_arguments_valid: true,
        tool_call_chunks: 5,
        reasoning_chunks: 3,
        completion_tokens: 8,
      });
    expect(run.classes.call.tool_calls).toMatchObject({ tool_calls: 8, arguments_valid: 8 });
    // Every turn after the first sent the call back and its result: engine-sim read both (a 400 otherwise).
    const loop = rows.filter((r) => r.class === 'loop');
    expect(loop.filter((r) => r.turn === 3).length).toBeGreaterThan(0);
    for (const r of loop) expect([r.status, r.tool_calls]).toEqual(['ok', 1]);
    // A 112×56 image costs 4×2 = 8 tokens beyond the 40 planned text tokens.
    for (const r of rows.filter((x) => x.class === 'seeing')) expect([r.status, r.prompt_tokens]).toEqual(['ok', 48]);
  });
});
