// An OpenAI-compatible server doing real llama.cpp inference (node-llama-cpp ships llama.cpp), in
// the shape of llama.cpp's own server: `POST /tokenize` with `content` (and `add_special`),
// `POST /apply-template` with `messages`, `GET /v1/models`, and streamed `/v1/chat/completions` and
// `/v1/completions` with usage when asked, and `/v1/embeddings` (each input tokenized as llama.cpp's
// server does, BOS added, and embedded by llama.cpp; usage.prompt_tokens is their tokens). Chat prompts go through the model's own chat template;
// one code path counts tokens for /tokenize and for generation, as llama.cpp's does. Requests are
// served one at a time on one sequence (enough for a test at a few requests a second).
//   node dist/test/llama-server.js --model FILE [--port 0]    → prints {"url": ...} on stdout
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { Template } from '@huggingface/jinja';
import { type LlamaModel, loadNodeLlamaCpp, type Token } from './node-llama-cpp.js';

const { values: args } = parseArgs({ options: { model: { type: 'string' }, port: { type: 'string', default: '0' } } });
const MODEL_ID = 'tiny-llama-cpp';

const { getLlama, LlamaLogLevel } = await loadNodeLlamaCpp();
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: args.model! });
// One thread: on a tiny model more threads only spin (measured: 1 ms a token with one, 20 with two).
const context = await model.createContext({ contextSize: 4096, sequences: 1, threads: 1 });
const template = new Template(String((model.fileInfo.metadata as { tokenizer?: { chat_template?: unknown } }).tokenizer?.chat_template));
const bosText = model.detokenize([model.tokens.bos!], true);
let queue: Promise<unknown> = Promise.resolve();
// Made on the first embeddings request: a model's embedding context is its own llama.cpp context.
let embedding: Awaited<ReturnType<LlamaModel['createEmbeddingContext']>> | undefined;

/** Tokens of `text`, special tokens parsed; BOS in front with `addSpecial` unless the text starts with it. */
function tokenize(text: string, addSpecial: boolean): Token[] {
  const tokens = model.tokenize(text, true);
  return addSpecial && tokens[0] !== model.tokens.bos ? [model.tokens.bos!, ...tokens] : tokens;
}

function applyTemplate(messages: unknown): string {
  return template.render({ messages, add_generation_prompt: true, bos_token: bosText, eos_token: '' });
}

async function readJson(req: IncomingMessage): Promise<Record<string, any>> {
  let raw = '';
  for await (const c of req) raw += c;
  return JSON.parse(raw || '{}');
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function generate(kind: 'chat' | 'completions', body: Record<string, any>, res: ServerResponse): Promise<void> {
  const prompt = kind === 'chat' ? applyTemplate(body.messages) : String(body.prompt);
  const input = tokenize(prompt, true);
  const maxTokens = Number(body.max_tokens ?? 16);
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'cmpl-1', object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion', created, model: MODEL_ID, choices, ...extra })}\n\n`;
  const piece = (text: string, finish: string | null) =>
    kind === 'chat' ? { index: 0, delta: text ? { content: text } : {}, finish_reason: finish } : { index: 0, text, finish_reason: finish };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const sequence = context.getSequence();
  const out: Token[] = [];
  try {
    // ignore_eos as vLLM has it: an end-of-generation token (llama.cpp also ends on the template's
    // <|end|>) does not end the answer, so exactly max_tokens come; it counts and shows no text.
    for await (const token of sequence.evaluate(input, { temperature: 0, yieldEogToken: body.ignore_eos === true })) {
      const text = model.detokenize([token], false, out);
      out.push(token);
      res.write(chunk([piece(text, null)]));
      if (out.length >= maxTokens) break;
    }
  } finally {
    sequence.dispose();
  }
  res.write(chunk([piece('', out.length >= maxTokens ? 'length' : 'stop')]));
  if (body.stream_options?.include_usage)
    res.write(
      chunk([], { usage: { prompt_tokens: input.length, completion_tokens: out.length, total_tokens: input.length + out.length } }),
    );
  res.end('data: [DONE]\n\n');
}

async function embeddings(body: Record<string, any>, res: ServerResponse): Promise<void> {
  const inputs: unknown[] = Array.isArray(body.input) ? body.input : [body.input];
  if (!inputs.every((t) => typeof t === 'string')) return json(res, 400, { error: { message: 'input must be a string or strings' } });
  embedding ??= await model.createEmbeddingContext({ contextSize: 4096, threads: 1 });
  let promptTokens = 0;
  const data = [];
  for (const [index, text] of (inputs as string[]).entries()) {
    const tokens = tokenize(text, true);
    promptTokens += tokens.length;
    data.push({ object: 'embedding', index, embedding: [...(await embedding.getEmbeddingFor(tokens)).vector] });
  }
  json(res, 200, { object: 'list', data, model: MODEL_ID, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === 'GET' && req.url === '/v1/models')
    return json(res, 200, { object: 'list', data: [{ id: MODEL_ID, object: 'model' }] });
  if (req.method !== 'POST') return json(res, 404, { error: { message: 'not found' } });
  const body = await readJson(req);
  if (req.url === '/tokenize') {
    // llama.cpp answers a body without `content` with no tokens.
    return json(res, 200, { tokens: typeof body.content === 'string' ? tokenize(body.content, body.add_special === true) : [] });
  }
  if (req.url === '/apply-template') return json(res, 200, { prompt: applyTemplate(body.messages) });
  const kind = req.url === '/v1/chat/completions' ? 'chat' : req.url === '/v1/completions' ? 'completions' : null;
  if (!kind && req.url !== '/v1/embeddings') return json(res, 404, { error: { message: 'not found' } });
  const turn = queue.then(() => (kind ? generate(kind, body, res) : embeddings(body, res)));
  queue = turn.catch(() => {});
  await turn;
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: Error) => {
    if (!res.headersSent) json(res, 500, { error: { message: err.message } });
    else res.end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(args.port), '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/v1`, model: MODEL_ID })}\n`);
});
// The test stops it with its stdin (a dead test never leaves it behind).
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
