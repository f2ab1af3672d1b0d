import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetServerCache } from './cache-reset.js';

// A loopback server that knows only the paths given (SGLang's flush, or nothing).
function server(paths: string[]): Promise<{ url: string; seen: string[]; close(): void; srv: Server }> {
  const seen: string[] = [];
  const srv = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(paths.includes(req.url ?? '') ? 200 : 404).end();
  });
  return new Promise((resolve) =>
    srv.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`, seen, close: () => srv.close(), srv }),
    ),
  );
}

const target = (base_url: string, reset: boolean) => ({
  base_url,
  api: 'chat' as const,
  model: 'm',
  timeout_s: 5,
  reset_cache_between_runs: reset,
});

describe('resetServerCache', () => {
  let sglang: Awaited<ReturnType<typeof server>>;
  let bare: Awaited<ReturnType<typeof server>>;
  beforeAll(async () => {
    sglang = await server(['/flush_cache']);
    bare = await server([]);
  });
  afterAll(() => {
    sglang.close();
    bare.close();
  });

  it("falls back to SGLang's /flush_cache when vLLM's endpoint is not there", async () => {
    const r = await resetServerCache(target(sglang.url, true), () => {});
    expect(r).toMatchObject({ requested: true, endpoint: '/flush_cache', http_status: 200 });
    expect(sglang.seen).toEqual(['POST /reset_prefix_cache', 'POST /flush_cache']);
  });

  it('refuses the run before any load when the server has neither', async () => {
    await expect(resetServerCache(target(bare.url, true), () => {})).rejects.toMatchObject({ code: 'LF_CACHE_RESET_UNAVAILABLE' });
  });

  it('asks nothing when the plan does not ask, and says so', async () => {
    const r = await resetServerCache(target(bare.url, false), () => {});
    expect(r).toMatchObject({ requested: false, endpoint: null });
    expect(bare.seen).toEqual(['POST /reset_prefix_cache', 'POST /flush_cache']);
    expect((await resetServerCache(undefined, () => {})).note).toMatch(/empty cache/);
  });
});
