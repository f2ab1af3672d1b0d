// The Anthropic Messages API adapter, driven through the agent's real request handler (client.ts):
// a recorded event stream is fed to it as undici would, split at every byte, and the record must
// come out the same each time — usage folded from message_start (input) and message_delta
// (output), thinking deltas as reasoning, text deltas as content, message_stop as the end.
import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { ANTHROPIC_VERSION, anthropicMessages, anthropicWith } from '../../shared/apis/anthropic-messages.js';
import { fillImages } from '../../shared/apis/contract.js';
import { apiDescriptor } from '../../shared/apis/registry.js';
import type { RequestResult } from '../client.js';
import { startRequest } from '../client.js';
import { classifyEvent, EventFlag } from '../sse.js';

const ev = (data: object | string): string => {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  const type = typeof data === 'string' ? 'x' : (data as { type: string }).type;
  return `event: ${type}\ndata: ${text}\n\n`;
};
const block = (index: number, delta: object) => ev({ type: 'content_block_delta', index, delta });

// As Anthropic streams a message with extended thinking (key order, ping and signature as sent).
const MESSAGE_START = ev({
  type: 'message_start',
  message: {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    content: [],
    model: 'claude-x',
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 16, output_tokens: 1 },
  },
});
const BODY = [
  ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  'event: ping\ndata: {"type": "ping"}\n\n',
  block(0, { type: 'thinking_delta', thinking: 'Let me think' }),
  block(0, { type: 'thinking_delta', thinking: ' about "it".' }),
  block(0, { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' }),
  ev({ type: 'content_block_stop', index: 0 }),
  ev({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
  block(1, { type: 'text_delta', text: 'Héllo' }),
  block(1, { type: 'text_delta', text: '' }),
  block(1, { type: 'text_delta', text: ' "wörld" 日本' }),
  // Keys in another order, as some servers send them.
  `event: content_block_delta\ndata: {"delta":{"text":"!","type":"text_delta"},"index":1,"type":"content_block_delta"}\n\n`,
  ev({ type: 'content_block_stop', index: 1 }),
  ev({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 15 } }),
].join('');
const STOP = ev({ type: 'message_stop' });

const spec = {
  className: 'c',
  requestIndex: 0,
  intendedNs: null,
  origin: 'http://h',
  path: '/v1/messages',
  headers: {},
  body: '{}',
  timeoutMs: 60_000,
  requireUsage: true,
  countOutput: null,
  canaryMarker: null,
  captureContent: true,
};

// Runs one request whose response is `chunks` (status 200). The clock ticks once per reading:
// sent 1, headers 2, then the chunks 3, 4, …
function replay(chunks: Buffer[], adapter = anthropicMessages, tools = false): RequestResult {
  let t = 0;
  let result: RequestResult | undefined;
  const dispatcher = {
    dispatch(_opts: unknown, handler: Dispatcher.DispatchHandler) {
      handler.onConnect?.(() => {});
      handler.onHeaders?.(200, [], () => {}, 'OK');
      for (const c of chunks) handler.onData?.(c);
      handler.onComplete?.([]);
      return true;
    },
  } as unknown as Dispatcher;
  startRequest(
    dispatcher,
    adapter,
    { ...spec, tools },
    () => ++t,
    new AbortController().signal,
    (r) => {
      result = r;
    },
  );
  return result!;
}

const summary = (r: RequestResult) => ({
  status: r.record.status,
  error: r.record.error,
  prompt: r.record.prompt_tokens,
  completion: r.record.completion_tokens,
  cached: r.record.cached_tokens,
  source: r.record.output_token_source,
  reasoning: r.record.reasoning_chunks,
  content: r.record.content_chunks,
  done: r.record.done_ns !== null,
  text: r.content,
});

const EXPECTED = {
  status: 'ok',
  error: null,
  // Anthropic's input_tokens leave out the cached ones: 25 + 16 read + 0 written.
  prompt: 41,
  // message_start's placeholder output count (1) is not taken; message_delta's is.
  completion: 15,
  cached: 16,
  source: 'usage',
  reasoning: 2,
  content: 3,
  done: true,
  text: 'Héllo "wörld" 日本!',
};

describe('the Anthropic Messages API adapter', () => {
  const bytes = Buffer.from(MESSAGE_START + BODY + STOP, 'utf8');
  const firstThinkingEnd = bytes.indexOf('\n\n', bytes.indexOf('thinking_delta')) + 2;

  it('reads a recorded stream whole: usage folded across message_start and message_delta, thinking as reasoning', () => {
    expect(summary(replay([bytes]))).toEqual(EXPECTED);
  });

  it('reads it the same split at every byte (inside UTF-8 characters too), and its end is the chunk that completes message_stop', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      const r = replay([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(summary(r)).toEqual(EXPECTED);
      // The first output is stamped with the chunk that completed the first thinking delta's event.
      expect(r.record.first_output_ns).toBe(cut >= firstThinkingEnd ? 3 : 4);
      expect(r.record.done_ns).toBe(4);
    }
  });

  it('takes a trailing [DONE] as a server may send it, and CRLF line ends', () => {
    expect(summary(replay([bytes, Buffer.from('data: [DONE]\n\n')]))).toEqual(EXPECTED);
    expect(summary(replay([Buffer.from((MESSAGE_START + BODY + STOP).replace(/\n/g, '\r\n'))]))).toEqual(EXPECTED);
  });

  it('fails a stream cut before message_stop, or carrying an error event', () => {
    const cut = replay([Buffer.from(MESSAGE_START + BODY)]);
    expect([cut.record.status, cut.record.error]).toEqual(['incomplete_stream', 'stream ended without its end event']);
    const overloaded = ev({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    const failed = replay([Buffer.from(MESSAGE_START + overloaded + STOP)]);
    expect([failed.record.status, failed.record.error]).toEqual(['incomplete_stream', 'the stream carried an error event']);
  });

  it('is missing usage when message_delta carries none (input counts alone are not a usage)', () => {
    const noUsage = BODY.replace(/,"usage":\{"output_tokens":15\}/, '');
    expect(noUsage).not.toBe(BODY);
    const r = replay([Buffer.from(MESSAGE_START + noUsage + STOP)]);
    expect([r.record.status, r.record.prompt_tokens, r.record.completion_tokens]).toEqual(['missing_usage', 41, null]);
  });

  it('classifies without parsing: escaped event names inside text are text', () => {
    const p = anthropicMessages.patterns;
    const text = (t: string) => JSON.stringify({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: t } });
    expect(classifyEvent(text('"type":"message_stop"'), p)).toBe(EventFlag.CONTENT);
    expect(classifyEvent(text('"type":"error"'), p)).toBe(EventFlag.CONTENT);
    expect(classifyEvent('{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}', p)).toBe(0);
    expect(classifyEvent('{"type": "ping"}', p)).toBe(0);
    expect(classifyEvent('{"type":"message_stop"}', p)).toBe(EventFlag.DONE);
  });

  it('sends max_tokens and the conversation, its system turns as `system`; the key as x-api-key with anthropic-version', () => {
    const fields = { model: 'm', maxTokens: 7, ignoreEos: false };
    const one = JSON.parse(anthropicMessages.bodyTemplate({ ...fields, prefix: '', suffix: 'a b', canary: false }).join('H'));
    expect(one).toEqual({ model: 'm', max_tokens: 7, stream: true, messages: [{ role: 'user', content: 'Ha b' }] });
    const conv = JSON.parse(
      anthropicMessages.bodyFromMessages({ ...fields, ignoreEos: true }, [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'y' },
        { role: 'user', content: 'z' },
      ]),
    );
    expect(conv).toEqual({
      model: 'm',
      max_tokens: 7,
      stream: true,
      ignore_eos: true,
      system: 'be brief',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'y' },
        { role: 'user', content: 'z' },
      ],
    });
    const d = apiDescriptor('anthropic');
    expect(d.authHeaders('k')).toEqual({ 'x-api-key': 'k', 'anthropic-version': ANTHROPIC_VERSION });
    expect(d.authHeaders(undefined)).toEqual({ 'anthropic-version': ANTHROPIC_VERSION });
    expect([d.path, d.chatTemplated, d.sessions, d.tools, d.images]).toEqual(['/messages', true, true, true, true]);
  });

  // As Anthropic streams a tool call: the tool_use block opens with id and name (and an empty
  // input), then input_json_delta fragments (the first often empty), then stop_reason "tool_use".
  const TOOL_STREAM = [
    MESSAGE_START,
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    block(0, { type: 'text_delta', text: 'Looking.' }),
    ev({ type: 'content_block_stop', index: 0 }),
    ev({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} } }),
    block(1, { type: 'input_json_delta', partial_json: '' }),
    block(1, { type: 'input_json_delta', partial_json: '{"city": "Par' }),
    `event: content_block_delta\ndata: {"delta":{"partial_json":"is"}","type":"input_json_delta"},"index":1,"type":"content_block_delta"}\n\n`.replace(
      '"is"}"',
      '"is\\"}"',
    ),
    ev({ type: 'content_block_stop', index: 1 }),
    ev({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } }),
    STOP,
  ].join('');

  it('reads a streamed tool call: its head from the block start, its arguments from the non-empty fragments', () => {
    const tools = anthropicWith({ batchSize: 1, tools: [{ name: 'lookup' }] });
    const r = replay([Buffer.from(TOOL_STREAM)], tools, true);
    expect(r.record).toMatchObject({ status: 'ok', tool_call_chunks: 2, tool_calls: 1, tool_arguments_valid: true, content_chunks: 1 });
    expect(r.toolCalls).toEqual([{ id: 'toolu_1', name: 'lookup', arguments: '{"city": "Paris"}' }]);
    const p = tools.patterns;
    expect(
      classifyEvent('{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}', p),
    ).toBe(EventFlag.TOOL_HEAD);
    expect(classifyEvent('{"index":1,"content_block":{"name":"n","type":"tool_use"},"type":"content_block_start"}', p)).toBe(
      EventFlag.TOOL_HEAD,
    );
    expect(classifyEvent('{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}', p)).toBe(0);
    expect(
      classifyEvent('{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"\\"type\\":\\"tool_use\\""}}', p),
    ).toBe(EventFlag.CONTENT);
  });

  it('offers tools as name, description and input_schema, tool_choice in its own spelling', () => {
    const fields = { model: 'm', maxTokens: 7, ignoreEos: false, prefix: '', suffix: 'x', canary: false };
    const params = { type: 'object', properties: { city: { type: 'string' } } };
    const withTools = (toolChoice?: string) =>
      JSON.parse(
        anthropicWith({
          batchSize: 1,
          tools: [{ name: 'lookup', description: 'Find.', parameters: params }, { name: 'bare' }],
          ...(toolChoice && { toolChoice }),
        })
          .bodyTemplate(fields)
          .join('H'),
      );
    expect(withTools().tools).toEqual([
      { name: 'lookup', description: 'Find.', input_schema: params },
      { name: 'bare', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(withTools().tool_choice).toBeUndefined();
    expect(withTools('required').tool_choice).toEqual({ type: 'any' });
    expect(withTools('auto').tool_choice).toEqual({ type: 'auto' });
    expect(withTools('none').tool_choice).toEqual({ type: 'none' });
  });

  it('sends an agentic loop back as tool_use blocks and one user message of tool_result blocks', () => {
    const adapter = anthropicWith({ batchSize: 1, tools: [{ name: 'search' }] });
    const call = (id: string, args: string) => ({ id, type: 'function' as const, function: { name: 'search', arguments: args } });
    const body = JSON.parse(
      adapter.bodyFromMessages({ model: 'm', maxTokens: 4, ignoreEos: false }, [
        { role: 'user', content: 'find it' },
        { role: 'assistant', content: '', tool_calls: [call('t1', '{"q": "a"}'), call('t2', 'not json')] },
        { role: 'tool', tool_call_id: 't1', content: 'result one' },
        { role: 'tool', tool_call_id: 't2', content: '' },
      ]),
    );
    expect(body.messages).toEqual([
      { role: 'user', content: 'find it' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 't1', name: 'search', input: { q: 'a' } },
          { type: 'tool_use', id: 't2', name: 'search', input: { arguments: 'not json' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'result one' },
          { type: 'tool_result', tool_use_id: 't2', content: '' },
        ],
      },
    ]);
    expect(body.tools).toEqual([{ name: 'search', input_schema: { type: 'object', properties: {} } }]);
  });

  it('sends images as base64 image blocks after the text, filled per request', () => {
    const adapter = anthropicWith({ batchSize: 1, images: 2 });
    const template = adapter.bodyTemplate({ model: 'm', maxTokens: 4, ignoreEos: false, prefix: '', suffix: 'x', canary: false }).join('H');
    const body = JSON.parse(fillImages(template, ['data:image/png;base64,AAAA', 'data:image/jpeg;base64,/9j/']));
    // Both marker forms in one body, and a marker with no image left as it was.
    expect(
      fillImages('[@@LF_IMAGE_0@@|@@LF_IMAGE_1_MEDIA@@|@@LF_IMAGE_1_DATA@@|@@LF_IMAGE_2@@]', [
        'data:image/png;base64,AA',
        'data:image/jpeg;base64,/9',
      ]),
    ).toBe('[data:image/png;base64,AA|image/jpeg|/9|@@LF_IMAGE_2@@]');
    expect(fillImages('no markers', ['data:image/png;base64,AA'])).toBe('no markers');
    expect(body.messages[0].content).toEqual([
      { type: 'text', text: 'Hx' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
    ]);
  });
});
