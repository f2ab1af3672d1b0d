// Per-request bodies on the newer APIs, end to end against engine-sim: a Mooncake trace replayed on
// the Responses API, a chat class offering tools and a chat class sending images, both with length
// distributions — each request's body built for its own shape by its class's adapter. Every trace
// row is sent once with exactly its lengths; every request of the other classes counts its own
// planned prompt (plus engine-sim's image tokens) and output; sessions on the Responses API send
// their conversation as `input`.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mooncakeJsonl, synthMooncake } from '../scripts/trace-synth.js';
import type { Plan } from '../shared/plan.js';
import { runPlanToEnd, startSim, tempDir } from './harness.js';

const ROWS = synthMooncake({ rows: 30, seed: 11, ratePerS: 12, outputTokens: [4, 16] });
const TIME_SCALE = 1;
const load = { model: 'poisson' as const, phases: [{ start_s: 0, duration_s: 2.5, rate_per_s: 4 }] };
const inputs = { distribution: 'uniform' as const, min: 20, max: 120 };
const outputs = { distribution: 'uniform' as const, min: 3, max: 12 };

describe('per-request bodies on the Responses API, with tools and with images', () => {
  it('sends every trace row once on /responses with exactly its lengths; tools and images classes get their drawn lengths', {
    timeout: 120_000,
  }, async () => {
    const work = tempDir();
    writeFileSync(join(work, 'trace.jsonl'), mooncakeJsonl(ROWS));
    const sim = await startSim([]);
    try {
      const plan: Plan = {
        schema: 'loadfleet.plan/v1',
        name: 'per-request-apis',
        seed: 8,
        duration_s: Math.ceil((ROWS.at(-1)!.timestamp * TIME_SCALE) / 1000) + 1,
        drain_timeout_s: 20,
        target: { base_url: sim.baseUrl, api: 'chat', model: 'loadfleet-sim', timeout_s: 20 },
        classes: [
          {
            name: 'trace',
            api: 'responses',
            prompt: {},
            load: { model: 'trace', phases: [], trace: { file: join(work, 'trace.jsonl'), format: 'mooncake', time_scale: TIME_SCALE } },
          },
          {
            name: 'tools',
            prompt: {
              input_tokens: inputs,
              output_tokens: outputs,
              tools: [{ name: 'lookup', description: 'Find a record.' }],
              tool_choice: 'required',
            },
            load,
          },
          { name: 'images', prompt: { input_tokens: inputs, output_tokens: outputs, images: { count: 1, width: 64, height: 64 } }, load },
          {
            name: 'chats',
            api: 'responses',
            prompt: { output_tokens: 6 },
            load: {
              model: 'sessions',
              phases: [{ start_s: 0, duration_s: 1.5, rate_per_s: 2 }],
              session: { turns: 2, think_time_s: 0.1, user_tokens: inputs },
            },
          },
        ],
      };
      const { run, rows } = await runPlanToEnd(plan, ['--agents', '2']);
      const of = (name: string) => rows.filter((r) => r.class === name);

      const trace = of('trace');
      expect(trace.map((r) => r.request_index).sort((a, b) => a - b)).toEqual(ROWS.map((_, i) => i));
      for (const r of trace) {
        expect(r.status).toBe('ok');
        expect(r.prompt_tokens).toBe(ROWS[r.request_index]!.input_length);
        expect(r.completion_tokens).toBe(ROWS[r.request_index]!.output_length);
      }

      const tools = of('tools');
      expect(tools.length).toBeGreaterThan(3);
      for (const r of tools) {
        expect(r.status).toBe('ok');
        expect(r.prompt_tokens).toBe(r.planned_prompt_tokens);
        expect(r.tool_calls).toBe(1);
      }
      expect(new Set(tools.map((r) => r.prompt_tokens)).size).toBeGreaterThan(1);
      expect(run.classes.tools.tool_calls).toMatchObject({ arguments_valid: tools.length, arguments_invalid: 0 });

      const images = of('images');
      expect(images.length).toBeGreaterThan(3);
      // engine-sim charges ceil(64/28)² = 9 tokens for one 64×64 image, beside the planned text.
      for (const r of images)
        expect({ status: r.status, extra: r.prompt_tokens - r.planned_prompt_tokens }).toEqual({ status: 'ok', extra: 9 });
      expect(new Set(images.map((r) => r.planned_prompt_tokens)).size).toBeGreaterThan(1);

      // Sessions on the Responses API send the conversation as `input`: each first turn exactly as planned, each later turn longer.
      const chats = of('chats');
      expect(chats.length).toBeGreaterThan(3);
      for (const r of chats) expect(r.status).toBe('ok');
      for (const r of chats.filter((c) => c.turn === 1)) expect(r.prompt_tokens).toBe(r.planned_prompt_tokens);
      for (const r of chats.filter((c) => c.turn === 2)) {
        const first = chats.find((c) => c.session_id === r.session_id && c.turn === 1);
        expect(r.prompt_tokens).toBeGreaterThan(first.prompt_tokens + 6);
      }
      expect(chats.some((c) => c.turn === 2)).toBe(true);

      expect(run.failed).toBe(0);
      const checks = Object.fromEntries(run.data_quality.checks.map((c: { name: string; status: string }) => [c.name, c.status]));
      expect(checks.request_shape).toBe('pass');
      console.log(
        `per-request APIs: ${trace.length} trace rows on /responses exact, ${tools.length} tools and ${images.length} images requests at their drawn lengths, ${chats.length} session turns on /responses; TTFT p50 trace ${run.classes.trace.windows.all.ttft_p50_ms} ms`,
      );
    } finally {
      sim.stop();
    }
  });
});
