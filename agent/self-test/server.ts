// The self-test's loopback SSE server, run as a child process of the agent so that its own CPU
// does not count as the agent's. Chat-completions-shaped streams; it records, on the host's
// monotonic clock (shared by every process of the machine), when it wrote each paced request's
// first content chunk, which is the ground truth the agent's stamps are compared with.
// It prints {"port": N} on stdout when listening and exits when its stdin closes.
import { createServer, type ServerResponse } from 'node:http';

const CHUNK = 'data: {"choices":[{"delta":{"content":"tok"}}]}\n\n';
const END = 'data: {"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":4}}\n\ndata: [DONE]\n\n';
const HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

const held: ServerResponse[] = [];
const truth = new Map<string, string>();

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function paced(res: ServerResponse, id: string, chunks: number, gapMs: number, firstMs: number): Promise<void> {
  res.writeHead(200, HEADERS);
  await sleep(firstMs);
  res.write(CHUNK);
  truth.set(id, process.hrtime.bigint().toString());
  for (let i = 1; i < chunks; i++) {
    await sleep(gapMs);
    if (res.destroyed) return;
    res.write(CHUNK);
  }
  res.end(END);
}

// One chunk to every held stream per round, a timer tick apart, so each arrives in its own read.
async function chunkRounds(rounds: number): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    for (const res of held) res.write(CHUNK);
    await sleep(1);
  }
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const q = (name: string, dflt: number): number => Number(url.searchParams.get(name) ?? dflt);
  req.resume();
  req.on('end', () => {
    switch (url.pathname) {
      case '/warm':
        res.writeHead(200, HEADERS);
        res.end(CHUNK + END);
        return;
      case '/hold':
        res.writeHead(200, HEADERS);
        res.write(CHUNK);
        held.push(res);
        return;
      case '/held':
        res.end(String(held.length));
        return;
      case '/chunks':
        void chunkRounds(q('n', 1)).then(() => res.end('ok'));
        return;
      case '/end':
        for (const h of held.splice(0)) h.end(END);
        res.end('ok');
        return;
      case '/paced':
        void paced(res, url.searchParams.get('id') ?? '', q('n', 10), q('gap', 10), q('first', 0));
        return;
      case '/truth':
        res.end(JSON.stringify(Object.fromEntries(truth)));
        truth.clear();
        return;
      default:
        res.writeHead(404).end();
    }
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof addr === 'object' && addr ? addr.port : 0 })}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
process.stdin.resume();
