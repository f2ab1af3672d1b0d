// The credentials an upload signs with, found where AWS SDKs look for them in a pod or on a VM, in
// their order: static keys in the environment; a web identity token (EKS IRSA: the token file and
// role the pod's service account projects) exchanged at STS for temporary keys; the container
// credentials endpoint (EKS Pod Identity, ECS) with its authorization token. Nothing is cached:
// one upload, one resolution.
import { readFile } from 'node:fs/promises';
import { request } from 'undici';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';

/** Keys to sign with, and where they came from. */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Which source gave them (said in the upload's log line). */
  source: 'environment' | 'web-identity' | 'container';
}

const fail = (message: string, exitCode: number = ExitCode.FAILURE): LoadfleetError =>
  new LoadfleetError(ErrorCode.UPLOAD_FAILED, message, { exitCode });

/** The value of an XML element in an STS answer (its values are plain text: keys, tokens, dates). */
const xmlValue = (xml: string, tag: string): string | null => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)?.[1] ?? null;

/** Resolves credentials from `env` (the process environment in use), trying each source in turn. */
export async function resolveCredentials(env: Record<string, string | undefined>): Promise<S3Credentials> {
  if (env['AWS_ACCESS_KEY_ID'] && env['AWS_SECRET_ACCESS_KEY'])
    return {
      accessKeyId: env['AWS_ACCESS_KEY_ID'],
      secretAccessKey: env['AWS_SECRET_ACCESS_KEY'],
      ...(env['AWS_SESSION_TOKEN'] ? { sessionToken: env['AWS_SESSION_TOKEN'] } : {}),
      source: 'environment',
    };
  if (env['AWS_WEB_IDENTITY_TOKEN_FILE'] && env['AWS_ROLE_ARN']) return webIdentity(env);
  if (env['AWS_CONTAINER_CREDENTIALS_FULL_URI']) return containerCredentials(env);
  throw fail(
    'no credentials for the upload: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with a web identity (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, as EKS IRSA sets them) or a container credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI, as EKS Pod Identity sets it)',
    ExitCode.INVALID_INPUT,
  );
}

/** STS AssumeRoleWithWebIdentity: an unsigned call, the token itself is the proof. */
async function webIdentity(env: Record<string, string | undefined>): Promise<S3Credentials> {
  const tokenFile = env['AWS_WEB_IDENTITY_TOKEN_FILE']!;
  const token = (
    await readFile(tokenFile, 'utf8').catch((err: Error) => {
      throw fail(`the web identity token ${tokenFile} cannot be read: ${err.message}`);
    })
  ).trim();
  const region = env['AWS_REGION'] || env['AWS_DEFAULT_REGION'] || 'us-east-1';
  const endpoint = env['AWS_ENDPOINT_URL_STS'] || env['AWS_ENDPOINT_URL'] || `https://sts.${region}.amazonaws.com`;
  const form = new URLSearchParams({
    Action: 'AssumeRoleWithWebIdentity',
    Version: '2011-06-15',
    RoleArn: env['AWS_ROLE_ARN']!,
    RoleSessionName: env['AWS_ROLE_SESSION_NAME'] || `loadfleet-${Date.now()}`,
    WebIdentityToken: token,
  });
  const res = await request(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  }).catch((err: Error) => {
    throw fail(`STS at ${endpoint}: ${err.message}`);
  });
  const xml = await res.body.text();
  const [id, secret, session] = ['AccessKeyId', 'SecretAccessKey', 'SessionToken'].map((t) => xmlValue(xml, t));
  if (res.statusCode !== 200 || !id || !secret || !session)
    throw fail(`STS AssumeRoleWithWebIdentity for ${env['AWS_ROLE_ARN']}: HTTP ${res.statusCode}: ${xml.slice(0, 300).trim()}`);
  return { accessKeyId: id, secretAccessKey: secret, sessionToken: session, source: 'web-identity' };
}

/** The container credentials endpoint: a GET with the pod's authorization token, answering JSON. */
async function containerCredentials(env: Record<string, string | undefined>): Promise<S3Credentials> {
  const uri = env['AWS_CONTAINER_CREDENTIALS_FULL_URI']!;
  const tokenFile = env['AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE'];
  const auth = tokenFile ? (await readFile(tokenFile, 'utf8')).trim() : env['AWS_CONTAINER_AUTHORIZATION_TOKEN'];
  const res = await request(uri, { headers: auth ? { authorization: auth } : {} }).catch((err: Error) => {
    throw fail(`the container credentials endpoint ${uri}: ${err.message}`);
  });
  const text = await res.body.text();
  let doc: { AccessKeyId?: string; SecretAccessKey?: string; Token?: string } = {};
  try {
    doc = JSON.parse(text);
  } catch {
    // reported below with the answer itself
  }
  if (res.statusCode !== 200 || !doc.AccessKeyId || !doc.SecretAccessKey)
    throw fail(`the container credentials endpoint ${uri}: HTTP ${res.statusCode}: ${text.slice(0, 300).trim()}`);
  return {
    accessKeyId: doc.AccessKeyId,
    secretAccessKey: doc.SecretAccessKey,
    ...(doc.Token ? { sessionToken: doc.Token } : {}),
    source: 'container',
  };
}
