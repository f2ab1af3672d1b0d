// Small HTTP helpers shared by the routes: bounded body reading and JSON/error responses.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './openai.js';

/** Largest accepted request body; far above a max_model_len prompt of short words. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Reads the whole request body as UTF-8; 413 past MAX_BODY_BYTES. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_BODY_BYTES) {
        reject(new ApiError(413, `Request body exceeds ${MAX_BODY_BYTES} bytes`, 'invalid_request_error', 'body_too_large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Sends `body` as a complete JSON response. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Sends an OpenAI-style error, unless the response has already started. */
export function sendError(res: ServerResponse, err: ApiError, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  sendJson(res, err.status, err.body(), headers);
}
