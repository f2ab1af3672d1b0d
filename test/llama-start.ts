// Starts test/llama-server.ts (real llama.cpp inference on the tiny GGUF the test writes) and
// resolves with its base URL; the returned stop() ends it through its stdin.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { distPath, tempDir } from './harness.js';
import { writeTinyGguf } from './tiny-gguf.js';

/** A running llama.cpp server: its OpenAI base URL (…/v1) and root, and how to stop it. */
export interface LlamaServer {
  baseUrl: string;
  root: string;
  stop(): void;
}

export async function startLlamaServer(): Promise<LlamaServer> {
  const model = join(tempDir(), 'tiny.gguf');
  writeTinyGguf(model);
  const server = spawn(process.execPath, [distPath('test/llama-server.js'), '--model', model], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    server.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
    });
    server.on('exit', (code) => reject(new Error(`llama server exited with ${code}`)));
  });
  const baseUrl = JSON.parse(line).url as string;
  return { baseUrl, root: baseUrl.replace(/\/v1$/, ''), stop: () => server.stdin?.end() };
}

/** The server's token ids of a chat request with `messages` (its template applied, as for generation). */
export async function llamaChatIds(root: string, messages: readonly { role: string; content: string }[]): Promise<number[]> {
  const post = async (path: string, body: unknown): Promise<any> =>
    (await fetch(`${root}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })).json();
  const { prompt } = await post('/apply-template', { messages });
  return (await post('/tokenize', { content: prompt, add_special: true })).tokens;
}
