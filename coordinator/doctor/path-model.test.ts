// The doctor probes whatever APIs the registry holds, each with its own request builder, path and
// stream reader: a test-only API module whose path carries the model name (Gemini's
// `models/{model}:streamGenerateContent`), registered here, is probed and read against a loopback
// server that speaks it, with no change to the doctor.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiAdapter, ApiDescriptor, ApiModule } from '../../shared/apis/contract.js';
import { numberOrNull, objectOf, pathFor, STREAMED, textOf } from '../../shared/apis/contract.js';
import { apiDescriptors, registerApi } from '../../shared/apis/registry.js';
import { classify } from './classify.js';
import { observe, PROBE_MAX_TOKENS, PROBE_PROMPT, probedApis } from './probes.js';

const descriptor: ApiDescriptor = {
  name: 'gemini-test',
  order: 9,
  summary: '`gemini-test` (/models/{model}:streamGenerateContent)',
  path: '/models/{model}:streamGenerateContent?alt=sse',
  metrics: STREAMED,
  chatTemplated: true,
  batched: false,
  perRequest: false,
  sessions: false,
  tools: false,
  images: false,
  doctorProbe: true,
  authHeaders: (key) => (key ? { 'x-goog-api-key': key } : {}),
};

const firstParts = (event: unknown) => {
  const candidates = objectOf(event).candidates;
  const first = Array.isArray(candidates) ? objectOf(candidates[0]) : {};
  const parts = objectOf(first.content).parts;
  return Array.isArray(parts) ? parts.map(objectOf) : [];
};

// Gemini's streamed shape: candidates[0].content.parts[].text (thought: true for reasoning), usageMetadata, finishReason on the last.
const adapter: ApiAdapter = {
  descriptor,
  path: descriptor.path,
  patterns: {
    content: /"text":\s*"[^"]/,
    reasoning: /"thought":\s*true/,
    usage: /"usageMetadata":\s*\{/,
    doneEvent: /"finishReason":\s*"STOP"/,
  },
  metrics: STREAMED,
  bodyTemplate: () => [],
  bodyFromMessages: (input, messages) =>
    JSON.stringify({
      contents: messages.map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] })),
      generationConfig: { maxOutputTokens: input.maxTokens },
    }),
  deltaText: (event) => {
    const parts = firstParts(event);
    return {
      visible: parts
        .filter((p) => p.thought !== true)
        .map((p) => textOf(p.text))
        .join(''),
      reasoning: parts
        .filter((p) => p.thought === true)
        .map((p) => textOf(p.text))
        .join(''),
    };
  },
  usage: (event) => {
    const u = objectOf(objectOf(event).usageMetadata);
    return {
      prompt_tokens: numberOrNull(u.promptTokenCount),
      completion_tokens: numberOrNull(u.candidatesTokenCount),
      cached_tokens: null,
    };
  },
};
const geminiTest: ApiModule = { descriptor, adapter: () => adapter };

interface Seen {
  method: string;
  url: string;
  key: string | undefined;
  body: string;
}

// A loopback server of that API for one model: anything else is 404, as a Gemini endpoint answers chat paths.
function geminiServer(model: string, seen: Seen[]): Server {
  const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;
  return createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const c of req) body += c;
    seen.push({ method: req.method ?? '', url: req.url ?? '', key: req.headers['x-goog-api-key'] as string | undefined, body });
    if (req.method === 'GET' && req.url === '/v1beta/models') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: model }] }));
      return;
    }
    if (req.method === 'POST' && req.url === `/v1beta/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ candidates: [{ content: { parts: [{ text: 'Weighing waves.', thought: true }], role: 'model' } }] }));
      res.write(chunk({ candidates: [{ content: { parts: [{ text: 'The sea ' }], role: 'model' } }] }));
      res.end(
        chunk({
          candidates: [{ content: { parts: [{ text: 'is wide.' }], role: 'model' }, finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 4 },
        }),
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
  });
}

describe('the doctor through the API registry', () => {
  const model = 'gemini-test-1.5';
  const seen: Seen[] = [];
  const server = geminiServer(model, seen);
  let base = '';
  let unregister = () => {};

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1beta`;
    unregister = registerApi(geminiTest);
  });
  afterAll(() => {
    unregister();
    server.close();
  });

  it('an API path may carry the model name', () => {
    expect(pathFor(descriptor.path, 'models/x y')).toBe('/models/models%2Fx%20y:streamGenerateContent?alt=sse');
    expect(pathFor('/chat/completions', 'm')).toBe('/chat/completions');
  });

  it('probes a registered API with its own body, key header and path, and reads its stream with its own adapter', async () => {
    expect(probedApis().map((d) => d.name)).toEqual(['chat', 'completions', 'anthropic', 'gemini-test']);
    process.env['LF_TEST_GEMINI_KEY'] = 'k-123';
    const obs = await observe({ baseUrl: base, apiKeyEnv: 'LF_TEST_GEMINI_KEY', metricsUrls: [], headers: {}, timeoutMs: 5000 });
    delete process.env['LF_TEST_GEMINI_KEY'];
    const probe = seen.find((s) => s.method === 'POST' && s.url.includes(':streamGenerateContent'))!;
    expect(probe.url).toBe(`/v1beta/models/${model}:streamGenerateContent?alt=sse`);
    expect(probe.key).toBe('k-123');
    expect(JSON.parse(probe.body)).toEqual({
      contents: [{ role: 'user', parts: [{ text: PROBE_PROMPT }] }],
      generationConfig: { maxOutputTokens: PROBE_MAX_TOKENS },
    });
    // The built-in APIs were probed at their own paths and refused (404): not this server's; then the tokenize dialect.
    expect(seen.filter((s) => s.method === 'POST' && !s.url.includes('tokenize')).map((s) => s.url)).toEqual([
      '/v1beta/chat/completions',
      '/v1beta/completions',
      '/v1beta/messages',
      `/v1beta/models/${model}:streamGenerateContent?alt=sse`,
    ]);
    const report = classify(obs, 5000);
    expect(Object.keys(report.apis)).toEqual(['chat', 'completions', 'anthropic', 'gemini-test']);
    expect(report.apis['chat']).toMatchObject({ reachable: false, http_status: 404, streams: false });
    expect(report.apis['gemini-test']).toMatchObject({
      reachable: true,
      streams: true,
      content_chunks: 2,
      reasoning_chunks: 1,
      usage: 'streamed',
      stream_options: null,
      detail: `/models/${model}:streamGenerateContent?alt=sse streams (2 content events, 1 reasoning, ending in STOP)`,
    });
    expect(report.preferred_api).toBe('gemini-test');
    expect(report.notes).toContain('only gemini-test streams here: plans use api: gemini-test');
  });

  it('leaves the registry as it found it', () => {
    unregister();
    unregister = () => {};
    expect(apiDescriptors().map((d) => d.name)).not.toContain('gemini-test');
  });
});
