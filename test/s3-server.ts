// A minimal S3-compatible server for tests, on loopback: PUT and GET of objects (path-style), every
// request's AWS Signature V4 recomputed here, independently of the uploader's signing library, and
// the body checked against its signed SHA-256. A bad signature or body gets 403 / 400 as from S3.
import { createHash, createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();
const hex = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

/** A request as the signature sees it. */
export interface SignedRequest {
  method: string;
  /** The raw path as sent (already percent-encoded), without the query. */
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
}

/** The SigV4 signature of `req` for these signed headers, date and scope (AWS docs, "Signature Version 4 for S3"). */
export function sigV4(req: SignedRequest, signedHeaders: string[], secret: string, amzDate: string, scope: string): string {
  const query = req.query
    .split('&')
    .filter(Boolean)
    .map((p) => p.split('=') as [string, string?])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v ?? ''}`)
    .join('&');
  const headerLines = signedHeaders
    .map(
      (h) =>
        `${h}:${String(req.headers[h] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonical = [req.method, req.path, query, headerLines, signedHeaders.join(';'), String(req.headers['x-amz-content-sha256'])].join(
    '\n',
  );
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, hex(canonical)].join('\n');
  const [date, region, service] = scope.split('/') as [string, string, string];
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

/** Why `req` is not correctly signed with (accessKeyId, secret), or null. */
export function signatureProblem(req: SignedRequest, accessKeyId: string, secret: string): string | null {
  const auth = String(req.headers['authorization'] ?? '');
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8}\/[^/]+\/s3\/aws4_request), ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return `malformed Authorization header: ${auth}`;
  const [, key, scope, signed, signature] = m as unknown as [string, string, string, string, string];
  if (key !== accessKeyId) return `unknown access key ${key}`;
  const signedHeaders = signed.split(';');
  for (const required of ['host', 'x-amz-content-sha256', 'x-amz-date'])
    if (!signedHeaders.includes(required)) return `${required} is not signed`;
  const amzDate = String(req.headers['x-amz-date']);
  if (!scope.startsWith(amzDate.slice(0, 8))) return 'the scope date is not the request date';
  const expected = sigV4(req, signedHeaders, secret, amzDate, scope);
  return expected === signature ? null : 'SignatureDoesNotMatch';
}

/** A running server: its endpoint, the objects it holds (bucket/key → body), and what it refused. */
export interface S3Server {
  endpoint: string;
  objects: Map<string, Buffer>;
  refused: string[];
  close(): Promise<void>;
}

export async function startS3Server(accessKeyId: string, secret: string): Promise<S3Server> {
  const objects = new Map<string, Buffer>();
  const refused: string[] = [];
  const body = async (req: IncomingMessage): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  const server = createServer(async (req, res) => {
    const [path, query = ''] = (req.url ?? '/').split('?') as [string, string?];
    const data = await body(req);
    const problem = signatureProblem({ method: req.method ?? '', path, query, headers: req.headers }, accessKeyId, secret);
    if (problem) {
      refused.push(`${req.method} ${path}: ${problem}`);
      res.writeHead(403).end(`<Error><Code>SignatureDoesNotMatch</Code><Message>${problem}</Message></Error>`);
      return;
    }
    const key = decodeURIComponent(path.slice(1));
    if (req.method === 'PUT') {
      if (hex(data) !== req.headers['x-amz-content-sha256']) {
        refused.push(`PUT ${path}: body does not match its x-amz-content-sha256`);
        res.writeHead(400).end('<Error><Code>XAmzContentSHA256Mismatch</Code></Error>');
        return;
      }
      objects.set(key, data);
      res.writeHead(200, { etag: `"${createHash('md5').update(data).digest('hex')}"` }).end();
      return;
    }
    const obj = objects.get(key);
    if (req.method === 'GET' && obj) res.writeHead(200).end(obj);
    else res.writeHead(404).end('<Error><Code>NoSuchKey</Code></Error>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    objects,
    refused,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
