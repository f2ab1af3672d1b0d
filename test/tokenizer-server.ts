// An OpenAI-compatible loopback server that counts prompts with a Hugging Face tokenizer.json (as
// vLLM counts: the chat template applied), for tests of prompt exactness on a tokenizer unlike
// engine-sim's. It answers vLLM's `POST /tokenize` (unless told not to) and streams `max_tokens`
// replies of " the" (one token on the tokenizers the tests write) with usage.
import { createServer, type Server } from 'node:http';
import type { TokenizerFile } from '../shared/tokenizer-file.js';

/** A running server: its base URL (…/v1) and how to close it. */
export interface TokenizerServer {
  baseUrl: string;
  server: Server;
  close(): Promise<void>;
}

export function startTokenizerServer(tokenizer: TokenizerFile, opts: { tokenize: boolean }): Promise<TokenizerServer> {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const json = (status: number, v: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      if (req.method === 'GET' && req.url === '/v1/models') return json(200, { object: 'list', data: [{ id: 'tok', object: 'model' }] });
      const body = raw ? JSON.parse(raw) : {};
      if (req.url === '/tokenize' && opts.tokenize) {
        const count = body.messages
          ? tokenizer.countRequest(body.messages, 'chat')
          : tokenizer.countRequest(String(body.prompt), 'completions');
        return json(200, { count, max_model_len: 200_000, tokens: [] });
      }
      const kind = req.url === '/v1/chat/completions' ? 'chat' : req.url === '/v1/completions' ? 'completions' : null;
      if (!kind) return json(404, { error: { message: 'not found' } });
      const prompt =
        kind === 'chat' ? tokenizer.countRequest(body.messages, 'chat') : tokenizer.countRequest(String(body.prompt), 'completions');
      const n = Number(body.max_tokens ?? 16);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (choices: unknown[], extra = {}) =>
        `data: ${JSON.stringify({ id: 'c', object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion', created: 0, model: 'tok', choices, ...extra })}\n\n`;
      const piece = (text: string, finish: string | null) =>
        kind === 'chat'
          ? { index: 0, delta: text ? { content: text } : {}, finish_reason: finish }
          : { index: 0, text, finish_reason: finish };
      let out = '';
      for (let i = 0; i < n; i++) out += chunk([piece(' the', null)]);
      out += chunk([piece('', 'length')]);
      if (body.stream_options?.include_usage)
        out += chunk([], { usage: { prompt_tokens: prompt, completion_tokens: n, total_tokens: prompt + n } });
      res.end(`${out}data: [DONE]\n\n`);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`,
        server,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}
