import { describe, expect, it } from 'vitest';
import { validatePlan } from './plan-validate.js';

const plan = (classes: unknown[], api = 'chat') => ({
  schema: 'loadfleet.plan/v1',
  name: 'apis',
  seed: 1,
  duration_s: 10,
  target: { base_url: 'http://127.0.0.1:8000/v1', api, model: 'm' },
  classes,
});
const load = { model: 'poisson', phases: [{ start_s: 0, duration_s: 10, rate_per_s: 1 }] };

describe('a class and its API', () => {
  it('mixes APIs per class', () => {
    const r = validatePlan(
      plan([
        { name: 'chat', prompt: { input_tokens: 10, output_tokens: 5 }, load },
        { name: 'resp', api: 'responses', prompt: { input_tokens: 10, output_tokens: 5 }, load },
      ]),
    );
    expect(r.ok).toBe(true);
  });

  it('takes per-request bodies on responses; refuses them on embeddings, and an unknown API, with their paths', () => {
    const dist = { distribution: 'uniform', min: 1, max: 9 };
    const tools = [{ name: 'f' }];
    const images = { count: 1, width: 64, height: 64 };
    expect(
      validatePlan(
        plan([
          { name: 'a', api: 'responses', prompt: { input_tokens: dist, output_tokens: 5 }, load },
          { name: 't', prompt: { input_tokens: dist, output_tokens: dist, tools }, load },
          { name: 'i', prompt: { input_tokens: dist, output_tokens: 5, images }, load },
        ]),
      ).ok,
    ).toBe(true);
    const r = validatePlan(
      plan([
        { name: 'e', api: 'embeddings', prompt: { input_tokens: dist }, load },
        { name: 'b', api: 'classify', prompt: { input_tokens: 10, output_tokens: 5 }, load },
      ]),
    );
    expect(r.ok).toBe(false);
    const problems = (r as { problems: string[] }).problems;
    expect(problems).toContain(
      'classes[0].api: api "embeddings" sends fixed-length prompts only (an input_tokens distribution needs per-request bodies: one conversation each, which an embeddings batch of inputs has no place for)',
    );
    expect(problems.some((p) => p.startsWith('classes[1].api: must be one of'))).toBe(true);
  });

  it('applies target.api where the class names none', () => {
    const r = validatePlan(
      plan([{ name: 'a', prompt: { input_tokens: { distribution: 'uniform', min: 1, max: 9 } }, load }], 'embeddings'),
    );
    expect((r as { problems: string[] }).problems).toEqual([
      'classes[0]: api "embeddings" sends fixed-length prompts only (an input_tokens distribution needs per-request bodies: one conversation each, which an embeddings batch of inputs has no place for)',
    ]);
  });
});

describe('an embeddings class', () => {
  it('has inputs and a batch size, no output, no canary, sessions or first-token SLO', () => {
    expect(validatePlan(plan([{ name: 'e', api: 'embeddings', prompt: { input_tokens: 10, batch_size: 8 }, load }])).ok).toBe(true);
    const r = validatePlan(
      plan([
        {
          name: 'e',
          api: 'embeddings',
          prompt: { input_tokens: 10, output_tokens: 4, canary: true },
          load,
          slo: { ttft_p95_ms: 100, e2e_p95_ms: 500 },
        },
        { name: 'c', prompt: { input_tokens: 10, output_tokens: 4, batch_size: 2 }, load },
      ]),
    );
    expect((r as { problems: string[] }).problems).toEqual([
      'classes[0].prompt.output_tokens: not allowed with api "embeddings" (it generates no tokens)',
      'classes[0].prompt.canary: not allowed with api "embeddings" (there is no answer to check)',
      'classes[0].slo.ttft_p95_ms: not allowed with api "embeddings" (it has no first token; bound e2e_p95_ms)',
      'classes[1].prompt.batch_size: only allowed with api "embeddings" or "rerank"',
    ]);
  });
});

describe('a class offering tools', () => {
  it('is chat or anthropic, and tool_choice needs tools', () => {
    const tools = [{ name: 'f' }];
    expect(validatePlan(plan([{ name: 't', prompt: { input_tokens: 10, output_tokens: 5, tools, tool_choice: 'auto' }, load }])).ok).toBe(
      true,
    );
    const r = validatePlan(
      plan([
        { name: 'a', api: 'responses', prompt: { input_tokens: 10, output_tokens: 5, tools }, load },
        { name: 'b', prompt: { input_tokens: 10, output_tokens: 5, tool_choice: 'auto' }, load },
      ]),
    );
    expect((r as { problems: string[] }).problems).toEqual([
      'classes[0].prompt.tools: only allowed with api "chat" or "anthropic" (this class sends to "responses")',
      'classes[1].prompt.tool_choice: only allowed with tools',
    ]);
  });

  it('feeds tool results back (tool_loop) only in a sessions class with tools', () => {
    const tools = [{ name: 'f' }];
    const session = { turns: 3, think_time_s: 1, user_tokens: 20 };
    const sessions = { model: 'sessions', phases: [{ start_s: 0, duration_s: 10, rate_per_s: 1 }], session };
    expect(validatePlan(plan([{ name: 's', prompt: { output_tokens: 5, tools, tool_loop: true }, load: sessions }])).ok).toBe(true);
    const r = validatePlan(
      plan([
        { name: 'a', prompt: { input_tokens: 10, output_tokens: 5, tools, tool_loop: true }, load },
        { name: 'b', prompt: { output_tokens: 5, tool_loop: true }, load: sessions },
      ]),
    );
    expect((r as { problems: string[] }).problems).toEqual([
      'classes[0].prompt.tool_loop: only allowed with model "sessions" (a tool result is the next turn of a conversation)',
      'classes[1].prompt.tool_loop: only allowed with tools',
    ]);
  });
});

describe('a rerank class', () => {
  it('takes a batch of documents and no output, as embeddings do', () => {
    expect(validatePlan(plan([{ name: 'r', api: 'rerank', prompt: { input_tokens: 10, batch_size: 8 }, load }])).ok).toBe(true);
    const r = validatePlan(plan([{ name: 'r', api: 'rerank', prompt: { input_tokens: 10, output_tokens: 5 }, load }]));
    expect((r as { problems: string[] }).problems).toEqual([
      'classes[0].prompt.output_tokens: not allowed with api "rerank" (it generates no tokens)',
    ]);
  });
});

describe('a class sending images', () => {
  it('is chat or anthropic, not sessions', () => {
    const images = { count: 1, width: 64, height: 64 };
    expect(validatePlan(plan([{ name: 'i', prompt: { input_tokens: 10, output_tokens: 5, images }, load }])).ok).toBe(true);
    const r = validatePlan(plan([{ name: 'i', api: 'completions', prompt: { input_tokens: 10, output_tokens: 5, images }, load }]));
    expect((r as { problems: string[] }).problems).toEqual([
      'classes[0].prompt.images: not allowed with api "completions" (images go with api "chat" or "anthropic", in classes other than sessions)',
    ]);
  });
});
