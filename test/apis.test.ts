// Both OpenAI APIs, reasoning deltas (time to first output vs first content), and a target that
// is gone once the agents have warmed up.
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKind, Plan } from '../shared/plan.js';
import { freePort, runPlanToEnd, startSim } from './harness.js';

function plan(baseUrl: string, api: ApiKind): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: `api-${api}`,
    seed: 5,
    duration_s: 2,
    drain_timeout_s: 5,
    target: { base_url: baseUrl, api, model: 'loadfleet-sim', timeout_s: 5 },
    classes: [
      {
        name: 'rt',
        prompt: { input_tokens: 40, output_tokens: 12 },
        load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 2, rate_per_s: 5 }] },
      },
    ],
  };
}

// One run of `p` on 2 local agents that must exit 0: its run.json and rows.
const run = (p: Plan) => runPlanToEnd(p, ['--agents', '2']);

describe('APIs and targets', () => {
  let sim: { baseUrl: string; stop(): void };
  beforeAll(async () => {
    // Steps of 30 ms: a neighbour's load moves a timer by a few milliseconds, which a 10 ms step
    // would turn into a gap half its size (seen with two files at a time on 2 cores).
    sim = await startSim(['--reasoning-tokens', '3', '--ttft-ms', '20', '--itl-ms', '30']);
  });
  afterAll(() => sim?.stop());

  it('chat: reasoning deltas come first, so ttfo < ttft, and content chunks exclude them', async () => {
    const { run: r, rows } = await run(plan(sim.baseUrl, 'chat'));
    expect(rows).toHaveLength(10);
    for (const row of rows) {
      expect(row.status).toBe('ok');
      expect(row.reasoning_chunks).toBe(3);
      expect(row.content_chunks).toBe(9);
      expect(row.completion_tokens).toBe(12);
      // Reasoning first, by at least one of engine-sim's 30 ms steps in every row.
      expect(row.first_content_unix_ns - row.first_output_unix_ns).toBeGreaterThan(30_000_000n);
    }
    // Typically 3 steps of 30 ms; one row's gap can be shorter when engine-sim's step timer fires
    // late on a loaded machine and catches up, so the 3-step claim is on the median, with half a
    // step as room.
    const gaps = rows.map((row) => Number(row.first_content_unix_ns - row.first_output_unix_ns)).sort((a, b) => a - b);
    expect(gaps[Math.floor(gaps.length / 2)]).toBeGreaterThan(75_000_000);
    const all = r.classes.rt.windows.all;
    expect(all.ttft_p50_ms - all.ttfo_p50_ms).toBeGreaterThan(75);
    // The visible answer: 9 content tokens, 8 steps of 30 ms from the first to the last (240 ms;
    // 239.7 ms seen with two files beside it), so more than 7 steps.
    expect(all.visible_generation_samples).toBe(10);
    expect(all.visible_generation_p50_ms).toBeGreaterThan(210);
    expect(all.visible_generation_p50_ms).toBeLessThan(all.e2e_p50_ms);
    expect(r.plan.prompt_calibration.rt).toMatchObject({ method: 'server-tokenize', words: 39, counted_prompt_tokens: 40, attempts: 1 });
    expect(rows.every((row) => row.prompt_tokens === 40 && row.output_token_source === 'usage')).toBe(true);
  });

  it('completions: text deltas are content', async () => {
    const { rows } = await run(plan(sim.baseUrl, 'completions'));
    expect(rows.every((row) => row.status === 'ok' && row.content_chunks === 12 && row.reasoning_chunks === 0)).toBe(true);
  });

  it('a target gone after the warm-up: every request is a connect_error, recorded, and the run completes degraded', async () => {
    // It answers both agents' warm-up (GET /v1/models: reachable, so the run is not refused before
    // the load), then stops listening and drops its connections, so every request meets a closed port.
    const port = await freePort();
    let warmUps = 0;
    const gone = createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.end('{"data":[]}', () => {
          if (++warmUps < 2) return;
          gone.close();
          gone.closeAllConnections();
        });
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => gone.listen(port, '127.0.0.1', resolve));
    try {
      const { run: r, rows } = await run(plan(`http://127.0.0.1:${port}/v1`, 'chat'));
      expect(r.agents.map((a: { warm_up: { status: number } }) => a.warm_up.status)).toEqual([200, 200]);
      expect(rows).toHaveLength(10);
      expect(rows.every((row) => row.status === 'connect_error' && row.http_status === null && /ECONNREFUSED/.test(row.error))).toBe(true);
      expect(r.status).toBe('degraded');
      expect(r.error_counts).toEqual({ connect_error: 10 });
      // Nothing answered the tokenize endpoint (404): the prompts are words, said to be unverified.
      expect(r.classes.rt.prompt_length_method).toBe('words-unverified');
      expect(r.plan.prompt_calibration.rt.note).toMatch(/tokenize/);
    } finally {
      gone.close();
      gone.closeAllConnections();
    }
  });
});
