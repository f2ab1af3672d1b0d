// A minimal S3-compatible server for tests, on loopback: PUT and GET of objects (path-style) and
// multipart uploads (create, parts, complete, abort), every request's AWS Signature V4 recomputed
// here, independently of the uploader's signing library, and each body checked against its signed
// SHA-256. A bad signature or body gets 403 / 400 as from S3. It also plays STS
// (AssumeRoleWithWebIdentity at /sts) and a container credentials endpoint (/container-credentials),
// minting temporary keys the S3 side then accepts with their session token.
import { createHash, createHmac, randomBytes } from 'node:crypto';
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

/** Keys the server accepts: access key id → its secret and, for temporary keys, the session token. */
export type KeyRing = Map<string, { secret: string; token?: string }>;

/** Why `req` is not correctly signed with a key of `keys`, or null. */
export function signatureProblem(req: SignedRequest, keys: KeyRing): string | null {
  const auth = String(req.headers['authorization'] ?? '');
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8}\/[^/]+\/s3\/aws4_request), ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return `malformed Authorization header: ${auth}`;
  const [, key, scope, signed, signature] = m as unknown as [string, string, string, string, string];
  const known = keys.get(key);
  if (!known) return `unknown access key ${key}`;
  const secret = known.secret;
  if (known.token !== undefined && req.headers['x-amz-security-token'] !== known.token) return 'InvalidToken';
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
  /** Multipart uploads completed and aborted, and part uploads answered 500 on purpose. */
  multipart: { completed: number; aborted: number; failedParts: number };
  /** Answer the next N part uploads with 500 (a transient failure the uploader should retry). */
  failNextParts: number;
  /** The web identity token STS accepts, and the authorization the container endpoint accepts. */
  webIdentityToken: string;
  containerAuthorization: string;
  close(): Promise<void>;
}

export async function startS3Server(accessKeyId: string, secret: string): Promise<S3Server> {
  const objects = new Map<string, Buffer>();
  const refused: string[] = [];
  const keys: KeyRing = new Map([[accessKeyId, { secret }]]);
  const uploads = new Map<string, { key: string; parts: Map<number, Buffer> }>();
  const mint = (): { id: string; secret: string; token: string } => {
    const id = `ASIA${randomBytes(8).toString('hex').toUpperCase()}`;
    const minted = { id, secret: randomBytes(20).toString('base64'), token: randomBytes(24).toString('base64') };
    keys.set(id, { secret: minted.secret, token: minted.token });
    return minted;
  };
  const body = async (req: IncomingMessage): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  const state: S3Server = {
    endpoint: '',
    objects,
    refused,
    multipart: { completed: 0, aborted: 0, failedParts: 0 },
    failNextParts: 0,
    webIdentityToken: 'eyJ.web-identity.token',
    containerAuthorization: 'container-auth-token',
    close: () => new Promise((r) => server.close(() => r())),
  };
  const server = createServer(async (req, res) => {
    const [path, query = ''] = (req.url ?? '/').split('?') as [string, string?];
    const data = await body(req);
    if (path === '/sts') {
      const form = new URLSearchParams(data.toString());
      if (
        form.get('Action') !== 'AssumeRoleWithWebIdentity' ||
        form.get('WebIdentityToken') !== state.webIdentityToken ||
        !form.get('RoleArn')
      ) {
        res.writeHead(403).end('<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>');
        return;
      }
      const m = mint();
      res
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(
          `<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>${m.id}</AccessKeyId><SecretAccessKey>${m.secret}</SecretAccessKey><SessionToken>${m.token}</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>`,
        );
      return;
    }
    if (path === '/container-credentials') {
      if (req.headers.authorization !== state.containerAuthorization) {
        res.writeHead(401).end('{"message":"unauthorized"}');
        return;
      }
      const m = mint();
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ AccessKeyId: m.id, SecretAccessKey: m.secret, Token: m.token }));
      return;
    }
    const problem = signatureProblem({ method: req.method ?? '', path, query, headers: req.headers }, keys);
    if (problem) {
      refused.push(`${req.method} ${path}: ${problem}`);
      res.writeHead(403).end(`<Error><Code>SignatureDoesNotMatch</Code><Message>${problem}</Message></Error>`);
      return;
    }
    const key = decodeURIComponent(path.slice(1));
    const q = new URLSearchParams(query);
    if (hex(data) !== req.headers['x-amz-content-sha256']) {
      refused.push(`${req.method} ${path}: body does not match its x-amz-content-sha256`);
      res.writeHead(400).end('<Error><Code>XAmzContentSHA256Mismatch</Code></Error>');
      return;
    }
    if (req.method === 'POST' && q.has('uploads')) {
      const id = randomBytes(12).toString('hex');
      uploads.set(id, { key, parts: new Map() });
      res.writeHead(200).end(`<InitiateMultipartUploadResult><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`);
      return;
    }
    const upload = q.get('uploadId');
    if (upload !== null) {
      const u = uploads.get(upload);
      if (!u || u.key !== key) {
        res.writeHead(404).end('<Error><Code>NoSuchUpload</Code></Error>');
        return;
      }
      if (req.method === 'PUT') {
        if (state.failNextParts > 0) {
          state.failNextParts--;
          state.multipart.failedParts++;
          res.writeHead(500).end('<Error><Code>InternalError</Code></Error>');
          return;
        }
        u.parts.set(Number(q.get('partNumber')), data);
        res.writeHead(200, { etag: `"${createHash('md5').update(data).digest('hex')}"` }).end();
        return;
      }
      if (req.method === 'DELETE') {
        uploads.delete(upload);
        state.multipart.aborted++;
        res.writeHead(204).end();
        return;
      }
      // CompleteMultipartUpload: the listed parts, in order, each with the ETag its upload was given.
      const listed = [...data.toString().matchAll(/<PartNumber>(\d+)<\/PartNumber><ETag>([^<]*)<\/ETag>/g)];
      const bodies = listed.map(([, n, etag]) => {
        const part = u.parts.get(Number(n));
        return part && `"${createHash('md5').update(part).digest('hex')}"` === etag ? part : null;
      });
      if (bodies.length === 0 || bodies.some((b) => b === null)) {
        res.writeHead(400).end('<Error><Code>InvalidPart</Code></Error>');
        return;
      }
      objects.set(key, Buffer.concat(bodies as Buffer[]));
      uploads.delete(upload);
      state.multipart.completed++;
      res.writeHead(200).end('<CompleteMultipartUploadResult></CompleteMultipartUploadResult>');
      return;
    }
    if (req.method === 'PUT') {
      objects.set(key, data);
      res.writeHead(200, { etag: `"${createHash('md5').update(data).digest('hex')}"` }).end();
      return;
    }
    const obj = objects.get(key);
    if (req.method === 'GET' && obj) res.writeHead(200).end(obj);
    else res.writeHead(404).end('<Error><Code>NoSuchKey</Code></Error>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
