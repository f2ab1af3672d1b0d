// A scrape source behind authentication (an inference gateway's /metrics wants a service-account
// token): the token is read from bearer_token_file at every scrape, so a rotated token is used.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchExposition, scrapeDispatcher } from './fetch.js';

describe('fetchExposition with bearer_token_file', () => {
  let expected = 'token-one';
  const server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${expected}`) {
      res.writeHead(401).end('unauthorized');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('# TYPE up gauge\nup 1\n');
  });
  let url = '';
  const dispatcher = scrapeDispatcher();
  const dir = mkdtempSync(join(tmpdir(), 'loadfleet-scrape-auth-'));
  const file = join(dir, 'token');

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  });
  afterAll(async () => {
    await dispatcher.close();
    server.close();
  });

  it('sends the token in the file, re-read at every scrape', async () => {
    writeFileSync(file, 'token-one\n');
    const first = await fetchExposition(url, 2000, dispatcher, file);
    expect(first.error).toBeNull();
    expect(first.series?.[0]).toMatchObject({ name: 'up', value: 1 });
    // The kubelet rotates the projected token: the next scrape uses the new one.
    expected = 'token-two';
    writeFileSync(file, 'token-two');
    expect((await fetchExposition(url, 2000, dispatcher, file)).error).toBeNull();
  });

  it('without the token the source refuses; an unreadable or empty file is its own error', async () => {
    expect((await fetchExposition(url, 2000, dispatcher)).error?.kind).toBe('http_status');
    const missing = await fetchExposition(url, 2000, dispatcher, join(dir, 'absent'));
    expect(missing.error).toMatchObject({ kind: 'auth_file', message: expect.stringMatching(/absent: .*ENOENT/) });
    writeFileSync(join(dir, 'empty'), '\n');
    expect((await fetchExposition(url, 2000, dispatcher, join(dir, 'empty'))).error).toMatchObject({ kind: 'auth_file' });
  });
});
