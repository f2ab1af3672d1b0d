// Agentic loops end to end (prompt.tool_loop): a sessions class offering tools against engine-sim,
// which answers every tool-offering request with a tool call. Each later turn must send the
// earlier reply back as the assistant's tool_calls plus a role "tool" result (not a new user
// message), and stay token-exact: prompt_tokens = every planned message so far + every earlier
// reply. A recording proxy between the agents and engine-sim shows the bodies really sent.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { buildSchedule } from '../shared/schedule.js';
import { turnPromptTokens } from '../shared/session-shape.js';
import { runPlanToEnd, startSim } from './harness.js';

// Forwards every request to `upstream`, streaming the answer back, and keeps each chat body.
async function recordingProxy(upstream: string): Promise<{ url: string; bodies: any[]; server: Server }> {
  const bodies: any[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    if (req.url?.endsWith('/chat/completions')) bodies.push(JSON.parse(body.toString()));
    const up = await fetch(upstream + req.url, {
      method: req.method ?? 'GET',
      headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
      ...(body.length > 0 && { body }),
    });
    res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' });
    for await (const c of up.body ?? []) res.write(c);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, server };
}

describe('agentic loops: a tool result as the next turn', () => {
  let sim: { baseUrl: string; stop(): void };
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  beforeAll(async () => {
    sim = await startSim(['--ttft-ms', '10', '--itl-ms', '2']);
    proxy = await recordingProxy(new URL(sim.baseUrl).origin);
  });
  afterAll(() => {
    proxy?.server.close();
    sim?.stop();
  });

  it('sends tool_calls and a tool message each later turn, with prompt_tokens exact', async () => {
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'agentic',
      seed: 25,
      duration_s: 3,
      drain_timeout_s: 10,
      target: { base_url: proxy.url + new URL(sim.baseUrl).pathname, api: 'chat', model: 'loadfleet-sim', timeout_s: 10 },
      classes: [
        {
          name: 'agent',
          prompt: {
            output_tokens: { distribution: 'uniform', min: 4, max: 12 },
            tools: [{ name: 'search', parameters: { type: 'object', properties: { input: { type: 'string' } } } }],
            tool_choice: 'required',
            tool_loop: true,
          },
          load: {
            model: 'sessions',
            phases: [{ start_s: 0, duration_s: 1.5, rate_per_s: 6 }],
            session: { turns: 3, think_time_s: 0.05, user_tokens: { distribution: 'uniform', min: 20, max: 60 } },
          },
        },
      ],
    };
    const shapes = buildSchedule(plan).classes[0]!.sessions!;
    const { run, rows } = await runPlanToEnd(plan, ['--agents', '2']);
    expect(run.failed).toBe(0);
    expect(rows.length).toBe(3 * shapes.turns.length);
    for (const r of rows) {
      expect(r).toMatchObject({ status: 'ok', tool_calls: 1, tool_arguments_valid: true });
      expect(r.prompt_tokens).toBe(turnPromptTokens(shapes, r.session_id, r.turn));
    }
    // The bodies: turn k has k planned messages (a user message, then tool results) and k − 1 replies sent back as tool calls.
    expect(proxy.bodies).toHaveLength(rows.length);
    for (const b of proxy.bodies) {
      const roles = b.messages.map((m: any) => m.role);
      const turns = (roles.length + 1) / 2;
      expect(roles).toEqual(['user', ...Array.from({ length: turns - 1 }, () => ['assistant', 'tool']).flat()]);
      for (let k = 1; k < roles.length; k += 2) {
        const call = b.messages[k].tool_calls[0];
        expect(call.function.name).toBe('search');
        expect(JSON.parse(call.function.arguments)).toBeTypeOf('object');
        expect(b.messages[k + 1].tool_call_id).toBe(call.id);
        expect(call.id).toMatch(/^call_/);
      }
    }
    expect(proxy.bodies.filter((b) => b.messages.length === 5)).toHaveLength(shapes.turns.length);
    expect(run.sessions.agent).toMatchObject({ turns_sent: rows.length, turns_with_tool_result: 2 * shapes.turns.length });
    expect(run.field_definitions['sessions.<class>.turns_with_tool_result']).toMatch(/user_tokens/);
    expect(run.data_quality.checks.find((c: any) => c.name === 'request_shape').status).toBe('pass');
    console.log(`agentic: ${JSON.stringify({ ...run.sessions.agent, by_turn: undefined })}`);
  });
});
