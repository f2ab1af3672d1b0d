// Uploads a directory tree (a run, sweep or experiment directory, or all of them) to S3-compatible
// object storage: one signed PUT per file (AWS Signature V4, via the aws4 package), the body
// streamed from disk with its SHA-256 in the signature, so the server can refuse a corrupted body.
// Single PUTs: a file may be at most 5 GiB (S3's limit without multipart), far above a run's.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import aws4 from 'aws4';
import { request } from 'undici';
import { ErrorCode, LoadfleetError } from '../../shared/errors.js';
import type { S3Target } from './s3-target.js';
import { objectAddress } from './s3-target.js';

/** S3's largest single PUT. */
export const MAX_PUT_BYTES = 5 * 1024 ** 3;

/** What was uploaded. */
export interface UploadSummary {
  files: number;
  bytes: number;
  /** s3://bucket/prefix the keys start with. */
  location: string;
}

/** Uploads every file under `dir` to <prefix>/<basename of dir>/<relative path>. */
export async function uploadDir(dir: string, target: S3Target, log: (line: string) => void): Promise<UploadSummary> {
  const root = dir.replace(/\/+$/, '');
  const base = [target.prefix, root.split(sep).pop()].filter(Boolean).join('/');
  const files = await listFiles(root);
  let bytes = 0;
  for (const file of files) {
    const key = `${base}/${relative(root, file).split(sep).join('/')}`;
    bytes += await putFile(file, key, target);
  }
  const location = `s3://${target.bucket}/${base}`;
  log(`uploaded ${files.length} files (${bytes} bytes) to ${location}`);
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

async function sha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** PUTs one file; resolves with its size, throws LF_UPLOAD_FAILED with the server's answer. */
async function putFile(file: string, key: string, target: S3Target): Promise<number> {
  const { size } = await stat(file);
  if (size > MAX_PUT_BYTES) throw new LoadfleetError(ErrorCode.UPLOAD_FAILED, `${file} is larger than a single PUT allows (5 GiB)`);
  const { host, path } = objectAddress(target, key);
  const signed = aws4.sign(
    {
      host,
      path,
      method: 'PUT',
      service: 's3',
      region: target.region,
      headers: { 'content-length': String(size), 'content-type': 'application/octet-stream', 'x-amz-content-sha256': await sha256(file) },
    },
    target.credentials,
  );
  const url = `${target.endpoint.protocol}//${host}${path}`;
  try {
    const res = await request(url, {
      method: 'PUT',
      headers: signed.headers as Record<string, string>,
      body: createReadStream(file),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200)
      throw new LoadfleetError(ErrorCode.UPLOAD_FAILED, `PUT ${url}: HTTP ${res.statusCode}: ${text.slice(0, 300).trim()}`);
  } catch (err) {
    if (err instanceof LoadfleetError) throw err;
    throw new LoadfleetError(ErrorCode.UPLOAD_FAILED, `PUT ${url}: ${(err as Error).message}`);
  }
  return size;
}
