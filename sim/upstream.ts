// Gateway mode in front of a real server: forwards a request to the upstream OpenAI base URL and
// streams the answer back unchanged, aborting the upstream call when the client leaves.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'undici';
import { sendError } from './http.js';
import { ApiError } from './openai.js';

// Headers that describe one hop, not the request, and so are never forwarded.
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'te', 'trailer']);

/** The upstream URL for a path of ours: `/v1/...` maps under the base, anything else under its origin. */
export function upstreamUrl(base: string, path: string): string {
  const trimmed = base.replace(/\/+$/, '');
  if (path.startsWith('/v1/')) return `${trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`}${path.slice(3)}`;
  return `${new URL(base).origin}${path}`;
}

/** Forwards `req` (whose body was already read as `body`) and pipes the response to `res`. */
export async function forward(
  base: string,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  body: string | undefined,
): Promise<void> {
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (!HOP_BY_HOP.has(name) && typeof value === 'string') headers[name] = value;
  }
  try {
    const upstream = await request(upstreamUrl(base, path), {
      method: req.method === 'GET' ? 'GET' : 'POST',
      headers,
      ...(body === undefined ? {} : { body }),
      signal: controller.signal,
    });
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(upstream.headers)) {
      if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
    }
    res.writeHead(upstream.statusCode, out);
    res.flushHeaders();
    for await (const chunk of upstream.body) res.write(chunk);
    res.end();
  } catch (err) {
    if (controller.signal.aborted) return; // the client left; nothing to answer
    if (res.headersSent) res.destroy();
    else sendError(res, new ApiError(502, `Upstream request failed: ${(err as Error).message}`, 'server_error', 'bad_gateway'));
  }
}
