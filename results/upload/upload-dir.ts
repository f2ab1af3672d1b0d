// Uploads a directory tree (a run, sweep or experiment directory, or all of them) to S3-compatible
// object storage, every request signed (AWS Signature V4, via the aws4 package) with the body's
// SHA-256 in the signature, so the server can refuse a corrupted body. A file up to the part size
// is one PUT; a larger one a multipart upload (parts of the part size, each retried, then
// completed; aborted on failure so no half-upload is left billed), so a multi-GB requests.ndjson
// neither hits S3's 5 GiB single-PUT limit nor restarts from zero on one failed part.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import aws4 from 'aws4';
import { request } from 'undici';
import { ErrorCode, LoadfleetError } from '../../shared/errors.js';
import type { S3Target } from './s3-target.js';
import { objectAddress } from './s3-target.js';

/** S3's smallest part (all but the last), and the part size used unless told (64 MiB: 10,000 parts reach 640 GiB). */
export const MIN_PART_BYTES = 5 * 1024 ** 2;
export const DEFAULT_PART_BYTES = 64 * 1024 ** 2;
/** S3's most parts in one upload. */
const MAX_PARTS = 10_000;
/** Attempts per part before the upload is aborted. */
const PART_ATTEMPTS = 3;

/** What was uploaded. */
export interface UploadSummary {
  files: number;
  bytes: number;
  /** s3://bucket/prefix the keys start with. */
  location: string;
}

/** Uploads every file under `dir` to <prefix>/<basename of dir>/<relative path>; files over `partBytes` in parts. */
export async function uploadDir(
  dir: string,
  target: S3Target,
  log: (line: string) => void,
  partBytes = DEFAULT_PART_BYTES,
): Promise<UploadSummary> {
  if (partBytes < MIN_PART_BYTES) throw new LoadfleetError(ErrorCode.UPLOAD_FAILED, `a part must be at least ${MIN_PART_BYTES} bytes`);
  const root = dir.replace(/\/+$/, '');
  const base = [target.prefix, root.split(sep).pop()].filter(Boolean).join('/');
  const files = await listFiles(root);
  let bytes = 0;
  for (const file of files) {
    const key = `${base}/${relative(root, file).split(sep).join('/')}`;
    const { size } = await stat(file);
    bytes += size <= partBytes ? await putFile(file, key, target, size) : await multipartFile(file, key, target, size, partBytes, log);
  }
  const location = `s3://${target.bucket}/${base}`;
  log(`uploaded ${files.length} files (${bytes} bytes) to ${location} (credentials: ${target.credentials.source})`);
  return { files: files.length, bytes, location };
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out.sort();
}

async function sha256(file: string, start = 0, end = Number.POSITIVE_INFINITY): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file, { start, end })) h.update(chunk as Buffer);
  return h.digest('hex');
}

const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');

/** One signed request to `key` (with `query`), its body from `body`; resolves with the answer, throws LF_UPLOAD_FAILED on a non-2xx. */
async function send(
  target: S3Target,
  key: string,
  method: string,
  query: string,
  body: { sha256: string; length: number; open: () => NodeJS.ReadableStream | string },
): Promise<{ headers: Record<string, string | string[] | undefined>; text: string }> {
  const { host, path } = objectAddress(target, key);
  const full = query ? `${path}?${query}` : path;
  const signed = aws4.sign(
    {
      host,
      path: full,
      method,
      service: 's3',
      region: target.region,
      // A DELETE carries no body, and undici sends none of its headers: sign only what is sent.
      headers:
        method === 'DELETE'
          ? { 'x-amz-content-sha256': body.sha256 }
          : { 'content-length': String(body.length), 'content-type': 'application/octet-stream', 'x-amz-content-sha256': body.sha256 },
    },
    target.credentials,
  );
  const url = `${target.endpoint.protocol}//${host}${full}`;
  try {
    const res = await request(url, {
      method: method as 'PUT',
      headers: signed.headers as Record<string, string>,
      ...(method === 'DELETE' ? {} : { body: body.open() as never }),
    });
    const text = await res.body.text();
    // S3 may answer CompleteMultipartUpload 200 with an <Error> body.
    if (res.statusCode < 200 || res.statusCode > 299 || text.includes('<Error>'))
      throw new LoadfleetError(ErrorCode.UPLOAD_FAILED, `${method} ${url}: HTTP ${res.statusCode}: ${text.slice(0, 300).trim()}`);
    return { headers: res.headers, text };
  } catch (err) {
    if (err instanceof LoadfleetError) throw err;
    throw new LoadfleetError(ErrorCode.UPLOAD_FAILED, `${method} ${url}: ${(err as Error).message}`);
  }
}

/** PUTs one file; resolves with its size. */
async function putFile(file: string, key: string, target: S3Target, size: number): Promise<number> {
  await send(target, key, 'PUT', '', { sha256: await sha256(file), length: size, open: () => createReadStream(file) });
  return size;
}

const xmlBody = (text: string) => ({
  sha256: createHash('sha256').update(text).digest('hex'),
  length: Buffer.byteLength(text),
  open: () => text,
});
const NO_BODY = { sha256: EMPTY_SHA256, length: 0, open: () => '' };

/** A multipart upload of one file: create, each part (retried), complete; abort if any step fails. */
async function multipartFile(
  file: string,
  key: string,
  target: S3Target,
  size: number,
  partBytes: number,
  log: (line: string) => void,
): Promise<number> {
  const parts = Math.ceil(size / partBytes);
  if (parts > MAX_PARTS)
    throw new LoadfleetError(ErrorCode.UPLOAD_FAILED, `${file}: ${parts} parts of ${partBytes} bytes exceed S3's ${MAX_PARTS}`);
  const created = await send(target, key, 'POST', 'uploads=', NO_BODY);
  const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(created.text)?.[1];
  if (!uploadId) throw new LoadfleetError(ErrorCode.UPLOAD_FAILED, `${key}: CreateMultipartUpload answered without an UploadId`);
  const id = encodeURIComponent(uploadId);
  try {
    const etags: string[] = [];
    for (let n = 1; n <= parts; n++) {
      const start = (n - 1) * partBytes;
      const end = Math.min(size, start + partBytes) - 1;
      const part = { sha256: await sha256(file, start, end), length: end - start + 1, open: () => createReadStream(file, { start, end }) };
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await send(target, key, 'PUT', `partNumber=${n}&uploadId=${id}`, part);
          etags.push(String(res.headers.etag ?? ''));
          break;
        } catch (err) {
          if (attempt >= PART_ATTEMPTS) throw err;
          log(`part ${n} of ${key} failed (${(err as Error).message}); retrying`);
        }
      }
    }
    const list = etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${etag}</ETag></Part>`).join('');
    await send(target, key, 'POST', `uploadId=${id}`, xmlBody(`<CompleteMultipartUpload>${list}</CompleteMultipartUpload>`));
    return size;
  } catch (err) {
    await send(target, key, 'DELETE', `uploadId=${id}`, NO_BODY).catch(() => undefined); // best effort: the error below is the news
    throw err;
  }
}
