// Where an upload goes: an s3://bucket/prefix URL plus the standard AWS environment (the names
// every AWS SDK and CLI reads), resolved to an endpoint, a bucket, a key prefix and credentials.
// Pure: the environment and the credentials (credentials.ts) are passed in.
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import type { S3Credentials } from './credentials.js';

/** A resolved upload destination. */
export interface S3Target {
  /** scheme://host[:port] the requests go to. */
  endpoint: URL;
  bucket: string;
  /** Key prefix, without leading or trailing slash ('' for the bucket's root). */
  prefix: string;
  region: string;
  /** Path-style (endpoint/bucket/key: MinIO, Ceph, most S3-compatible servers) or virtual-hosted (bucket.endpoint/key: AWS). */
  pathStyle: boolean;
  credentials: S3Credentials;
}

const fail = (message: string): LoadfleetError =>
  new LoadfleetError(ErrorCode.UPLOAD_FAILED, message, { exitCode: ExitCode.INVALID_INPUT });

/** The bucket and key prefix of an s3://bucket[/prefix] URL, or a clear refusal. */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!m) throw fail(`${url} is not an s3://bucket[/prefix] URL (bucket: 3-63 characters of a-z, 0-9, '.', '-')`);
  return { bucket: m[1]!, prefix: (m[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

/**
 * Reads AWS_REGION or AWS_DEFAULT_REGION (default us-east-1) and AWS_ENDPOINT_URL_S3 or
 * AWS_ENDPOINT_URL (default: AWS itself, virtual-hosted). A custom endpoint is addressed
 * path-style unless AWS_S3_FORCE_PATH_STYLE=false.
 */
export function s3Target(url: string, env: Record<string, string | undefined>, credentials: S3Credentials): S3Target {
  const { bucket, prefix } = parseS3Url(url);
  const region = env['AWS_REGION'] || env['AWS_DEFAULT_REGION'] || 'us-east-1';
  const custom = env['AWS_ENDPOINT_URL_S3'] || env['AWS_ENDPOINT_URL'];
  let endpoint: URL;
  try {
    endpoint = new URL(custom || `https://s3.${region}.amazonaws.com`);
  } catch {
    throw fail(`the endpoint ${custom} is not a URL`);
  }
  if (endpoint.protocol !== 'https:' && endpoint.protocol !== 'http:') throw fail(`the endpoint ${endpoint.href} is not http(s)`);
  return {
    endpoint: new URL(endpoint.origin),
    bucket,
    prefix,
    region,
    pathStyle: custom ? env['AWS_S3_FORCE_PATH_STYLE'] !== 'false' : false,
    credentials,
  };
}

/** The request's host and path for `key` (each segment percent-encoded as S3 expects). */
export function objectAddress(t: S3Target, key: string): { host: string; path: string } {
  const encoded = key
    .split('/')
    .map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
  return t.pathStyle
    ? { host: t.endpoint.host, path: `/${t.bucket}/${encoded}` }
    : { host: `${t.bucket}.${t.endpoint.host}`, path: `/${encoded}` };
}
