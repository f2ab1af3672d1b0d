// Calibration against loopback servers that tokenize unlike engine-sim: a word costs one token per
// four characters (so the head and long filler words cost several) and the chat template adds nine.
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { batchInputHead } from '../../shared/api-kinds.js';
import type { Plan } from '../../shared/plan.js';
import { promptFill, promptHead, promptText } from '../../shared/prompt-text.js';
import { TINY_TEMPLATE_TOKENS, tinyCount, writeTinyTokenizer } from '../../test/tiny-tokenizer.js';
import { calibratePlan } from './index.js';
import { serverRoot } from './server-tokenize.js';

const TEMPLATE_TOKENS = 9;
const tokens = (text: string): number =>
  text
    .split(/\s+/)
    .filter(Boolean)
    .reduce((n, w) => n + Math.ceil(w.length / 4), 0);

type Dialect = 'vllm' | 'llama.cpp' | 'none';

/** `failAfter`: tokenize calls answered before every later one gets HTTP 500. */
function serve(dialect: Dialect, failAfter = Number.POSITIVE_INFINITY): Promise<{ server: Server; base: string; calls: string[] }> {
  const calls: string[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      calls.push(req.url!);
      const body = JSON.parse(raw || '{}');
      const json = (status: number, v: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      if (req.url === '/tokenize' && calls.filter((c) => c === '/tokenize').length > failAfter) return json(500, { error: 'overloaded' });
      if (dialect === 'vllm' && req.url === '/tokenize') {
        const n = body.messages ? TEMPLATE_TOKENS + tokens(body.messages[0].content) : tokens(body.prompt);
        return json(200, { count: n, max_model_len: 8192, tokens: [] });
      }
      if (dialect === 'llama.cpp' && req.url === '/apply-template')
        return json(200, { prompt: `<|u|> <|x|> ${body.messages[0].content} <|a|>` });
      // llama.cpp answers a body without `content` with no tokens.
      if (dialect === 'llama.cpp' && req.url === '/tokenize') return json(200, { tokens: Array(tokens(body.content ?? '')).fill(1) });
      json(404, { error: 'not found' });
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, base: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, calls }),
    ),
  );
}

function plan(base: string, api: 'chat' | 'completions'): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: 'cal',
    seed: 4,
    duration_s: 1,
    target: { base_url: base, api, model: 'm', timeout_s: 5 },
    classes: [
      {
        name: 'small',
        prompt: { input_tokens: 64, output_tokens: 4 },
        load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 1, rate_per_s: 1 }] },
      },
      {
        name: 'long',
        prompt: { input_tokens: 20000, output_tokens: 4, cache: 'shared', shared_prefix_tokens: 8000 },
        load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 1, rate_per_s: 1 }] },
      },
    ],
  };
}

let open: Server | undefined;
afterEach(() => open?.close());

describe('prompt calibration', () => {
  it('finds the server root of a /v1 base', () => {
    expect(serverRoot('http://h:8000/v1')).toBe('http://h:8000');
    expect(serverRoot('https://gw.example/llm/v1/')).toBe('https://gw.example/llm');
  });

  it.each([
    ['vllm', 'chat', TEMPLATE_TOKENS],
    ['vllm', 'completions', 0],
    ['llama.cpp', 'chat', 6], // three 5-character markers from /apply-template
    ['llama.cpp', 'completions', 0],
  ] as const)('%s %s: the whole request counts input_tokens (exactly), what the agents will send', async (dialect, api, template) => {
    const s = await serve(dialect);
    open = s.server;
    const p = await calibratePlan(plan(s.base, api), 'run-1', () => {});
    for (const cls of p.classes) {
      const c = p.prompt_calibration![cls.name]!;
      expect(c.method).toBe('server-tokenize');
      expect(c.note).toContain(dialect === 'vllm' ? 'vLLM/SGLang dialect' : 'llama.cpp dialect');
      expect(c.counted_prompt_tokens).toBe(cls.prompt.input_tokens);
      expect(c.attempts).toBeLessThanOrEqual(10);
      // Recount the text the agents build from these sizes (head of another request: same length).
      const text = promptText(promptFill(4, cls.name, c.prefix_words, c.words, c.pad_words), promptHead('run-1', cls.name, 4321));
      expect(tokens(text) + template).toBe(c.counted_prompt_tokens);
    }
  });

  it('a server without a tokenize endpoint: words, said to be unverified', async () => {
    const s = await serve('none');
    open = s.server;
    const lines: string[] = [];
    const p = await calibratePlan(plan(s.base, 'chat'), 'run-1', (l) => lines.push(l));
    expect(p.prompt_calibration!.small).toMatchObject({
      method: 'words-unverified',
      words: 63,
      pad_words: 0,
      counted_prompt_tokens: null,
      attempts: 0,
    });
    expect(p.prompt_calibration!.small!.note).toMatch(
      /no tokenize endpoint at http:\/\/127\.0\.0\.1:\d+\/tokenize \(vLLM\/SGLang: HTTP 404/,
    );
    expect(s.calls).toEqual(['/tokenize']);
    expect(lines[0]).toMatch(/^prompt length of small: words-unverified, 63 filler words for 64 tokens, not counted/);
  });

  it.each([
    ['chat', TINY_TEMPLATE_TOKENS],
    ['completions', 1],
  ] as const)('no tokenize endpoint but a tokenizer file (%s): counted with it, template or BOS included', async (api, special) => {
    const s = await serve('none');
    open = s.server;
    const p0 = plan(s.base, api);
    const tokenizer = writeTinyTokenizer(mkdtempSync(join(tmpdir(), 'lf-tok-')));
    const p = await calibratePlan({ ...p0, target: { ...p0.target!, tokenizer } }, 'run-2', () => {});
    for (const cls of p.classes) {
      const c = p.prompt_calibration![cls.name]!;
      expect(c).toMatchObject({ method: 'tokenizer-file' });
      expect(c.note).toMatch(/tokenizer\.json with its chat template; no tokenize endpoint/);
      expect(c.counted_prompt_tokens).toBe(cls.prompt.input_tokens);
      const text = promptText(promptFill(4, cls.name, c.prefix_words, c.words, c.pad_words), promptHead('run-2', cls.name, 99));
      expect(tinyCount(text) + special).toBe(c.counted_prompt_tokens);
    }
  });

  it.each(['vllm', 'llama.cpp'] as const)(
    '%s: each class counted as its own API sends it (class.api over target.api; responses and chat templated, embeddings not)',
    async (dialect) => {
      const s = await serve(dialect);
      open = s.server;
      const p0 = plan(s.base, 'completions');
      const load = p0.classes[0]!.load;
      const classes = [
        { name: 'comp', prompt: { input_tokens: 64, output_tokens: 4 }, load },
        { name: 'chat', api: 'chat' as const, prompt: { input_tokens: 64, output_tokens: 4 }, load },
        { name: 'resp', api: 'responses' as const, prompt: { input_tokens: 64, output_tokens: 4 }, load },
        { name: 'emb', api: 'embeddings' as const, prompt: { input_tokens: 64 }, load },
      ];
      const p = await calibratePlan({ ...p0, classes }, 'run-3', () => {});
      const template = dialect === 'vllm' ? TEMPLATE_TOKENS : 6;
      for (const [name, templated] of [
        ['comp', false],
        ['chat', true],
        ['resp', true],
        ['emb', false],
      ] as const) {
        const c = p.prompt_calibration![name]!;
        expect(c.counted_prompt_tokens, name).toBe(64);
        const head = name === 'emb' ? batchInputHead(promptHead('run-3', name, 7), 3) : promptHead('run-3', name, 7);
        const text = promptText(promptFill(4, name, c.prefix_words, c.words, c.pad_words), head);
        expect(tokens(text) + (templated ? template : 0), name).toBe(64);
      }
    },
  );

  it('per-request classes on a templated and a plain API: each built from its own API’s vocabulary, every sampled body exact', async () => {
    const s = await serve('none');
    open = s.server;
    const p0 = plan(s.base, 'chat');
    const tokenizer = writeTinyTokenizer(mkdtempSync(join(tmpdir(), 'lf-tok-')));
    const load = { model: 'constant-rate' as const, phases: [{ start_s: 0, duration_s: 1, rate_per_s: 8 }] };
    const dist = { distribution: 'uniform' as const, min: 40, max: 120 };
    const classes = [
      { name: 'chat', prompt: { input_tokens: dist, output_tokens: 4 }, load },
      { name: 'resp', api: 'responses' as const, prompt: { input_tokens: dist, output_tokens: 4 }, load },
      { name: 'comp', api: 'completions' as const, prompt: { input_tokens: dist, output_tokens: 4 }, load },
    ];
    const p = await calibratePlan({ ...p0, target: { ...p0.target!, tokenizer }, classes }, 'run-4', () => {});
    // The tiny template costs TINY_TEMPLATE_TOKENS for an empty chat request; completions pay BOS alone.
    expect(p.prompt_vocabulary!.request_tokens).toBe(TINY_TEMPLATE_TOKENS);
    expect(Object.keys(p.prompt_vocabularies!)).toEqual(['completions']);
    expect(p.prompt_vocabularies!.completions!.request_tokens).toBe(1);
    for (const name of ['chat', 'resp', 'comp']) {
      const check = p.prompt_calibration![name]!.check!;
      expect(check.sampled, name).toBeGreaterThan(0);
      expect({ name, exact: check.exact, max: check.max_abs_difference }).toEqual({ name, exact: check.sampled, max: 0 });
    }
  });

  it('a tokenizer file that cannot be read: words, with both reasons', async () => {
    const s = await serve('none');
    open = s.server;
    const p0 = plan(s.base, 'chat');
    const p = await calibratePlan({ ...p0, target: { ...p0.target!, tokenizer: '/nonexistent/tokenizer.json' } }, 'run-3', () => {});
    expect(p.prompt_calibration!.small!.method).toBe('words-unverified');
    expect(p.prompt_calibration!.small!.note).toMatch(/^cannot read \/nonexistent\/tokenizer\.json: ENOENT.*; no tokenize endpoint/);
  });

  it('a pre-load sample count that fails is reported on the class, never swallowed', async () => {
    const load = { model: 'constant-rate' as const, phases: [{ start_s: 0, duration_s: 1, rate_per_s: 8 }] };
    const classes = [
      { name: 'ln', prompt: { input_tokens: { distribution: 'uniform' as const, min: 40, max: 120 }, output_tokens: 4 }, load },
    ];
    // A healthy server first: how many counts the vocabulary takes before the sample is counted.
    const healthy = await serve('vllm');
    const ok = await calibratePlan({ ...plan(healthy.base, 'chat'), classes }, 'run-5', () => {});
    healthy.server.close();
    const sampled = ok.prompt_calibration!.ln!.check!.sampled;
    const before = healthy.calls.filter((c) => c === '/tokenize').length - sampled;
    expect(sampled).toBeGreaterThan(0);
    // The same plan against a server that starts failing once the vocabulary is found.
    const s = await serve('vllm', before);
    open = s.server;
    const lines: string[] = [];
    const p = await calibratePlan({ ...plan(s.base, 'chat'), classes }, 'run-5', (l) => lines.push(l));
    const c = p.prompt_calibration!.ln!;
    expect(c.method).toBe('server-tokenize');
    expect(c.check).toBeUndefined();
    expect(c.check_error).toMatch(/500/);
    expect(lines.find((l) => l.startsWith('prompt length of ln'))).toMatch(/the pre-load count of sampled bodies FAILED: .*500/);
  });
});
