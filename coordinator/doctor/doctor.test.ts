import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { apiModule } from '../../shared/apis/registry.js';
import { parsePlanText } from '../../shared/plan-load.js';
import { validatePlan } from '../../shared/plan-validate.js';
import { readApiAnswer } from './answers.js';
import { classify, metricStacks } from './classify.js';
import type { Exchange } from './http.js';
import type { Observations } from './probes.js';
import { classTokens, starterJson, starterPlan, starterYaml } from './starter-plan.js';

const ok = (url: string, body: string, status = 200): Exchange => ({
  url,
  status,
  contentType: '',
  body,
  firstByteMs: 5,
  totalMs: 9,
  failure: null,
});
const sse = (...events: unknown[]) => `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`;

// The chat API's answers, read through its own adapter.
const readAnswer = (body: string) => readApiAnswer(apiModule('chat').adapter({ batchSize: 1 }), body);

describe('readApiAnswer', () => {
  it('counts content and reasoning events by field name, and finds usage and [DONE]', () => {
    const f = readAnswer(
      sse(
        { choices: [{ delta: { reasoning: 'hm' } }] },
        { choices: [{ delta: { reasoning_content: 'so' } }] },
        { choices: [{ delta: { content: 'Hi' } }] },
        { choices: [], usage: { prompt_tokens: 3, completion_tokens: 3 } },
      ),
    );
    expect(f).toMatchObject({
      streamed: true,
      contentChunks: 1,
      reasoningChunks: 2,
      reasoningFields: ['reasoning', 'reasoning_content'],
      done: true,
    });
    expect(f.usage).toEqual({ prompt_tokens: 3, completion_tokens: 3 });
  });
  it('a JSON body is not a stream; a stream without [DONE] is said', () => {
    expect(readAnswer(JSON.stringify({ choices: [{ message: { content: 'x' } }] }))).toMatchObject({ streamed: false, contentChunks: 1 });
    // A completions chunk, read by the completions API's adapter (the chat adapter reads delta.content only).
    const completions = apiModule('completions').adapter({ batchSize: 1 });
    expect(readApiAnswer(completions, 'data: {"choices":[{"text":"a"}]}\n\n')).toMatchObject({
      streamed: true,
      done: false,
      contentChunks: 1,
    });
    expect(readAnswer('data: {"choices":[{"text":"a"}]}\n\n')).toMatchObject({ contentChunks: 0 });
  });
});

describe('metricStacks', () => {
  it('names each serving stack by its prefix', () => {
    expect(
      metricStacks([
        'vllm:num_requests_running',
        'sglang:num_running_reqs',
        'llamacpp:requests_processing',
        'llm_d_epp_flow_control_queue_size',
        'go_gc',
      ]),
    ).toEqual(['vLLM', 'SGLang', 'llama.cpp', 'gateway']);
    expect(metricStacks(['inference_extension_flow_control_pool_saturation'])).toEqual(['gateway']);
    expect(metricStacks(['process_cpu_seconds_total'])).toEqual([]);
  });
});

function observations(over: Partial<Observations> = {}): Observations {
  const base = 'http://h:8000/v1';
  const stream = ok(`${base}/chat/completions`, sse({ choices: [{ delta: { content: 'a' } }] }));
  return {
    baseUrl: base,
    root: 'http://h:8000',
    apiKeyEnv: null,
    keySet: false,
    models: ok(`${base}/models`, JSON.stringify({ data: [{ id: 'm', max_model_len: 4096 }] })),
    model: 'm',
    apis: {
      chat: { first: ok(stream.url, '{"error":{"message":"ignore_eos is not a valid parameter"}}', 400), withoutIgnoreEos: stream },
      completions: { first: ok(`${base}/completions`, 'not found', 404), withoutIgnoreEos: null },
      anthropic: null,
    },
    tokenize: {
      found: false,
      note: 'no tokenize endpoint at http://h:8000/tokenize (vLLM/SGLang: HTTP 404 from /tokenize: )',
      probeTokens: null,
    },
    metrics: [ok('http://h:8000/metrics', '# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 0\n')],
    requests: 6,
    ...over,
  };
}

describe('classify and the starter plan', () => {
  it('an endpoint that refuses ignore_eos, sends no usage, has no tokenizer and a 4k context: loadable, each said; the plan fits it and validates', () => {
    const r = classify(observations(), 15_000);
    expect(r).toMatchObject({ loadable: true, preferred_api: 'chat' });
    expect(r.apis.chat).toMatchObject({ streams: true, ignore_eos: 'refused', usage: 'not_sent' });
    expect(r.apis.completions).toMatchObject({ reachable: false, http_status: 404 });
    expect(r.metrics[0]).toMatchObject({ ok: true, stacks: ['SGLang'] });
    const notes = r.notes.join('\n');
    for (const n of ['no usage', 'refuses ignore_eos', 'no tokenize endpoint', 'completions does not stream']) expect(notes).toContain(n);
    const options = { rate: 0.5, durationS: 120, command: 'loadfleet', planPath: 'p.yaml', schemaRef: './s.json', apiKeyEnv: 'KEY' };
    const plan = starterPlan(r, options);
    const checked = validatePlan(plan);
    expect(checked.ok ? [] : checked.problems).toEqual([]);
    expect(plan.classes.map((c) => [c.prompt.input_tokens, c.prompt.ignore_eos])).toEqual([
      [Math.floor((Math.floor(4096 * 0.9) - 128) / 5), false],
      [Math.floor(4096 * 0.9) - 128, false],
    ]);
    expect(plan.classes[0]!.headers).toBeUndefined();
    expect(plan.target).toMatchObject({ api: 'chat', model: 'm', api_key_env: 'KEY' });
    const yaml = starterYaml(plan, r, options);
    expect(yaml).toContain('export KEY=...');
    expect(yaml).toContain('add `tokenizer: /path/to/tokenizer.json`');
    // The published JSON Schema (an independent validator, as an editor would check it) accepts the JSON file.
    const schema = JSON.parse(readFileSync(new URL('../../examples/schemas/loadfleet.plan.v1.schema.json', import.meta.url), 'utf8'));
    const check = new Ajv({ strict: true, allErrors: true }).compile(schema);
    expect(check(JSON.parse(starterJson(plan, options))), JSON.stringify(check.errors)).toBe(true);
    // Both files read back as the same plan, through the loader every command uses.
    const fromYaml = parsePlanText(yaml, 'p.yaml');
    expect(parsePlanText(starterJson(plan, options), 'p.json')).toEqual(fromYaml);
    expect(fromYaml.classes[1]!.load.phases[0]!.rate).toMatchObject({ center: 0.458, pattern: 'noisy-sinusoidal' });
  });
  it('the seed lengths stay where the context allows them or is not stated', () => {
    expect(classTokens(null).batch.input).toBe(20_000);
    expect(classTokens(32_768).realtime.input).toBe(4096);
  });
  it('not loadable when no API streams', () => {
    const r = classify(
      observations({
        apis: {
          chat: { first: ok('http://h:8000/v1/chat/completions', '{}', 500), withoutIgnoreEos: null },
          completions: null,
          anthropic: null,
        },
      }),
      15_000,
    );
    expect(r.loadable).toBe(false);
    expect(r.problems[0]).toMatch(/^no API streams: \/chat\/completions answered HTTP 500/);
  });
  it('an endpoint serving only the Messages API: loadable with api anthropic, its thinking read as reasoning', () => {
    const ev = (e: { type: string }) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
    const stream = [
      ev({ type: 'message_start', message: { usage: { input_tokens: 9, output_tokens: 1 } } } as { type: string }),
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } } as { type: string }),
      ev({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi' } } as { type: string }),
      ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } } as { type: string }),
      ev({ type: 'message_stop' }),
    ].join('');
    const messages = ok('http://h:8000/v1/messages', stream);
    const r = classify(
      observations({
        apis: {
          chat: { first: ok('http://h:8000/v1/chat/completions', 'not found', 404), withoutIgnoreEos: null },
          completions: { first: ok('http://h:8000/v1/completions', 'not found', 404), withoutIgnoreEos: null },
          anthropic: { first: messages, withoutIgnoreEos: null },
        },
      }),
      15_000,
    );
    expect(r).toMatchObject({ loadable: true, preferred_api: 'anthropic' });
    expect(r.apis.anthropic).toMatchObject({
      streams: true,
      content_chunks: 1,
      reasoning_chunks: 1,
      reasoning_fields: ['thinking'],
      usage: 'streamed',
    });
    expect(r.notes.join('\n')).toContain('plans use api: anthropic');
    expect(
      starterPlan(r, { rate: 1, durationS: 60, command: 'loadfleet', planPath: 'p.yaml', schemaRef: './s.json' }).target,
    ).toMatchObject({
      api: 'anthropic',
    });
    // Without message_stop the stream is incomplete, as a run would count it.
    const cut = classify(
      observations({
        apis: {
          chat: null,
          completions: null,
          anthropic: { first: ok(messages.url, stream.replace(/event: message_stop[\s\S]*$/, '')), withoutIgnoreEos: null },
        },
      }),
      15_000,
    );
    expect(cut.apis.anthropic?.detail).toMatch(/ended without message_stop/);
  });
});
