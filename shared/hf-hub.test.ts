// A tokenizer by model id, fetched from a loopback server that serves the Hugging Face hub's file
// layout (`/<org>/<name>/resolve/<revision>/<file>`, X-Repo-Commit, tokenizer.json redirected as the
// hub redirects LFS files, 401 without the token): fetched once into a hub-layout cache, then read
// from it, also offline.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TINY_TEMPLATE_TOKENS, tinyCount, writeTinyTokenizer } from '../test/tiny-tokenizer.js';
import { hubCache, hubTokenizer, modelIdOf } from './hf-hub.js';
import { loadTokenizerFile } from './tokenizer-file.js';

const COMMIT = 'c0ffee0000000000000000000000000000000001';
const TOKEN = 'hf_test_token';

describe('tokenizer by Hugging Face model id', () => {
  const files = writeTinyTokenizer(mkdtempSync(join(tmpdir(), 'lf-hub-src-')));
  const dir = join(files, '..');
  const calls: { url: string; auth: string | undefined }[] = [];
  let server: Server;
  let endpoint: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      calls.push({ url: req.url!, auth: req.headers.authorization });
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return res.writeHead(401).end('unauthorized');
      const m = /^\/loadfleet\/tiny\/resolve\/main\/(tokenizer(?:_config)?\.json)$/.exec(req.url!);
      if (m?.[1] === 'tokenizer.json') return res.writeHead(302, { location: '/cdn/tok', 'x-repo-commit': COMMIT }).end();
      if (m?.[1] === 'tokenizer_config.json')
        return res.writeHead(200, { 'x-repo-commit': COMMIT }).end(readFileSync(join(dir, 'tokenizer_config.json')));
      if (req.url === '/cdn/tok') return res.writeHead(200).end(readFileSync(join(dir, 'tokenizer.json')));
      res.writeHead(404).end('Entry not found');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => server?.close());

  it('tells model ids from paths', () => {
    expect(modelIdOf('meta-llama/Llama-3.1-8B-Instruct')).toEqual({ repo: 'meta-llama/Llama-3.1-8B-Instruct', revision: 'main' });
    expect(modelIdOf('org/name@v1.0')).toEqual({ repo: 'org/name', revision: 'v1.0' });
    expect(modelIdOf('gpt2')).toEqual({ repo: 'gpt2', revision: 'main' });
    for (const path of ['/models/tokenizer.json', './tok', 'dir/tokenizer.json', files]) expect(modelIdOf(path)).toBeNull();
    expect(hubCache({ HF_HOME: '/h' })).toBe('/h/hub');
    expect(hubCache({ HF_HUB_CACHE: '/c', HF_HOME: '/h' })).toBe('/c');
  });

  it('fetches once into the hub-layout cache with HF_ENDPOINT and HF_TOKEN, then reads the cache, also offline', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'lf-hub-cache-'));
    const env = { HF_ENDPOINT: endpoint, HF_TOKEN: TOKEN, HF_HUB_CACHE: cache };
    const first = await hubTokenizer({ repo: 'loadfleet/tiny', revision: 'main' }, env);
    const snapshot = join(cache, 'models--loadfleet--tiny', 'snapshots', COMMIT);
    expect(first.path).toBe(join(snapshot, 'tokenizer.json'));
    expect(existsSync(join(snapshot, 'tokenizer_config.json'))).toBe(true);
    expect(readFileSync(join(cache, 'models--loadfleet--tiny', 'refs', 'main'), 'utf8')).toBe(COMMIT);
    expect(calls.map((c) => c.url)).toEqual([
      '/loadfleet/tiny/resolve/main/tokenizer.json',
      '/cdn/tok',
      '/loadfleet/tiny/resolve/main/tokenizer_config.json',
    ]);
    expect(calls.every((c) => c.auth === `Bearer ${TOKEN}`)).toBe(true);
    calls.length = 0;
    expect((await hubTokenizer({ repo: 'loadfleet/tiny', revision: 'main' }, env)).note).toMatch(/from the cache/);
    expect((await hubTokenizer({ repo: 'loadfleet/tiny', revision: 'main' }, { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '1' })).path).toBe(
      first.path,
    );
    expect(calls).toEqual([]);
    // Offline with nothing cached, or without the token: a readable error.
    const empty = mkdtempSync(join(tmpdir(), 'lf-hub-empty-'));
    await expect(hubTokenizer({ repo: 'loadfleet/tiny', revision: 'main' }, { HF_HUB_CACHE: empty, HF_HUB_OFFLINE: '1' })).rejects.toThrow(
      /is not in the hub cache .* and HF_HUB_OFFLINE is set/,
    );
    await expect(
      hubTokenizer({ repo: 'loadfleet/tiny', revision: 'main' }, { HF_HUB_CACHE: empty, HF_ENDPOINT: endpoint }),
    ).rejects.toThrow(/HTTP 401 \(a gated model\? set HF_TOKEN\)/);
    await expect(hubTokenizer({ repo: 'loadfleet/none', revision: 'main' }, { ...env, HF_HUB_CACHE: empty })).rejects.toThrow(/HTTP 404/);
  });

  it('target.tokenizer as a model id counts as the file does', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'lf-hub-cache2-'));
    const saved = { ...process.env };
    Object.assign(process.env, { HF_ENDPOINT: endpoint, HF_TOKEN: TOKEN, HF_HUB_CACHE: cache });
    try {
      const t = await loadTokenizerFile('loadfleet/tiny');
      expect(t.note).toMatch(/^loadfleet\/tiny@main fetched from http:\/\/127\.0\.0\.1:\d+ into .* with its chat template$/);
      const text = 'the way to go is up and out';
      expect(t.countRequest(text, 'chat')).toBe(tinyCount(text) + TINY_TEMPLATE_TOKENS);
    } finally {
      process.env = saved;
    }
  });
});
