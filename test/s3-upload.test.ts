// Results to object storage, end to end on loopback: a real coordinator run through the image's
// entry point (deploy/bin/loadfleet with $LOADFLEET_UPLOAD_URL, as the Kubernetes Job runs it),
// its run directory uploaded with signed PUTs to a local S3-compatible server that recomputes
// every signature itself; wrong credentials fail loudly and keep the files.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { constantRatePlan, startNode, tempDir, writePlan } from './harness.js';
import type { S3Server } from './s3-server.js';
import { sigV4, startS3Server } from './s3-server.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const KEY = 'AKIDLOADFLEET27';
const SECRET = 'loadfleet/secret+key=27';

describe('the verifier this test trusts', () => {
  it("reproduces AWS's published SigV4 example (GET Object, S3 documentation)", () => {
    const signature = sigV4(
      {
        method: 'GET',
        path: '/test.txt',
        query: '',
        headers: {
          host: 'examplebucket.s3.amazonaws.com',
          range: 'bytes=0-9',
          'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
          'x-amz-date': '20130524T000000Z',
        },
      },
      ['host', 'range', 'x-amz-content-sha256', 'x-amz-date'],
      'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      '20130524T000000Z',
      '20130524/us-east-1/s3/aws4_request',
    );
    expect(signature).toBe('f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
  });
});

describe('coordinator upload to S3-compatible storage', () => {
  let s3: S3Server;
  beforeAll(async () => {
    s3 = await startS3Server(KEY, SECRET);
  });
  afterAll(() => s3.close());
  const env = (extra: Record<string, string> = {}) => ({
    AWS_ACCESS_KEY_ID: KEY,
    AWS_SECRET_ACCESS_KEY: SECRET,
    AWS_REGION: 'eu-west-3',
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    ...extra,
  });

  it('a finished run is uploaded by the entry point, every file byte for byte under its signed key', async () => {
    const work = tempDir();
    const results = join(work, 'results', 'nightly');
    // Not spawnSync: the S3 server answers from this process's event loop.
    const child = spawn(
      join(ROOT, 'deploy/bin/loadfleet'),
      ['coordinator', 'start', '--agents', '1', '--plan', writePlan(work, constantRatePlan('upload', 2, 10)), '--out', results, '--quiet'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          ...env(),
          LOADFLEET_HOME: ROOT,
          LOADFLEET_UPLOAD_URL: 's3://lf-results/cluster a',
          LOADFLEET_UPLOAD_DIR: results,
        },
      },
    );
    const run = { status: null as number | null, stdout: '', stderr: '' };
    child.stdout.on('data', (c: Buffer) => (run.stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (run.stderr += c.toString()));
    run.status = await new Promise<number | null>((r) => child.on('exit', r));
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/uploaded (\d+) files \(\d+ bytes\) to s3:\/\/lf-results\/cluster a\/nightly/);
    expect(s3.refused).toEqual([]);
    const runId = readdirSync(results)[0]!;
    const local = readdirSync(join(results, runId));
    expect(local).toContain('run.json');
    for (const name of local)
      expect(s3.objects.get(`lf-results/cluster a/nightly/${runId}/${name}`), name).toEqual(readFileSync(join(results, runId, name)));
  }, 60_000);

  it('wrong credentials: the upload fails with LF_UPLOAD_FAILED and the server refused the signature', async () => {
    const work = tempDir();
    writePlan(join(work), constantRatePlan('x', 1, 1), 'file.json');
    const res = await startNode('coordinator/main.js', ['upload', work, 's3://lf-results/bad'], env({ AWS_SECRET_ACCESS_KEY: 'wrong' }))
      .done;
    expect(res.code).toBe(ExitCode.FAILURE);
    expect(res.stderr).toMatch(/LF_UPLOAD_FAILED: PUT .*: HTTP 403: .*SignatureDoesNotMatch/);
    expect(s3.refused.at(-1)).toMatch(/SignatureDoesNotMatch/);
  });

  it('refuses a bad URL or missing credentials before any request, naming what is missing', async () => {
    const work = tempDir();
    const noKey = await startNode('coordinator/main.js', ['upload', work, 's3://lf-results'], {
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
    }).done;
    expect(noKey.code).toBe(ExitCode.INVALID_INPUT);
    expect(noKey.stderr).toMatch(
      /LF_UPLOAD_FAILED: no credentials for the upload: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with a web identity/,
    );
    const badUrl = await startNode('coordinator/main.js', ['upload', work, 'https://lf-results'], env()).done;
    expect(badUrl.code).toBe(ExitCode.INVALID_INPUT);
    expect(badUrl.stderr).toMatch(/is not an s3:\/\/bucket/);
  });

  it('a file larger than the part size goes up in parts, a failed part retried, byte for byte', async () => {
    const work = tempDir();
    const big = randomBytes(12 * 1024 ** 2 + 12345); // 3 parts of 5 MiB
    writeFileSync(join(work, 'requests.ndjson'), big);
    writeFileSync(join(work, 'run.json'), '{}');
    s3.failNextParts = 1;
    const before = { ...s3.multipart };
    const res = await startNode('coordinator/main.js', ['upload', work, 's3://lf-results/big'], env({ LOADFLEET_UPLOAD_PART_MIB: '5' }))
      .done;
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout + res.stderr).toMatch(/part 1 of .*requests\.ndjson failed .*HTTP 500.*retrying/);
    const base = `lf-results/big/${work.split('/').pop()}`;
    expect(s3.objects.get(`${base}/requests.ndjson`)?.equals(big)).toBe(true);
    expect(s3.objects.get(`${base}/run.json`)?.toString()).toBe('{}');
    expect(s3.multipart).toEqual({ completed: before.completed + 1, aborted: before.aborted, failedParts: before.failedParts + 1 });
  });

  it('a part that keeps failing aborts the upload: nothing half-written is left, and the run says why', async () => {
    const work = tempDir();
    writeFileSync(join(work, 'requests.ndjson'), randomBytes(6 * 1024 ** 2));
    s3.failNextParts = 3;
    const before = { ...s3.multipart };
    const res = await startNode('coordinator/main.js', ['upload', work, 's3://lf-results/broken'], env({ LOADFLEET_UPLOAD_PART_MIB: '5' }))
      .done;
    expect(res.code).toBe(ExitCode.FAILURE);
    expect(res.stderr).toMatch(/LF_UPLOAD_FAILED: PUT .*partNumber=1.*HTTP 500/);
    expect(s3.multipart.aborted, s3.refused.join('\n')).toBe(before.aborted + 1);
    expect([...s3.objects.keys()].some((k) => k.startsWith('lf-results/broken/'))).toBe(false);
  });

  it('credentials from a web identity (EKS IRSA) or a container credentials endpoint (EKS Pod Identity), no static keys', async () => {
    const work = tempDir();
    writeFileSync(join(work, 'run.json'), '{"ok":true}');
    const tokenFile = join(work, 'token');
    writeFileSync(tokenFile, `${s3.webIdentityToken}\n`);
    const keyless = { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_REGION: 'eu-west-3', AWS_ENDPOINT_URL_S3: s3.endpoint };
    const irsa = await startNode('coordinator/main.js', ['upload', work, 's3://lf-results/irsa'], {
      ...keyless,
      AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
      AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/loadfleet',
      AWS_ENDPOINT_URL_STS: `${s3.endpoint}/sts`,
    }).done;
    expect(irsa.code, irsa.stderr).toBe(0);
    expect(irsa.stdout).toMatch(/\(credentials: web-identity\)/);
    const authFile = join(work, 'auth');
    writeFileSync(authFile, s3.containerAuthorization);
    const pod = await startNode('coordinator/main.js', ['upload', work, 's3://lf-results/pod'], {
      ...keyless,
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `${s3.endpoint}/container-credentials`,
      AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: authFile,
    }).done;
    expect(pod.code, pod.stderr).toBe(0);
    expect(pod.stdout).toMatch(/\(credentials: container\)/);
    const name = work.split('/').pop();
    expect(s3.objects.get(`lf-results/irsa/${name}/run.json`)?.toString()).toBe('{"ok":true}');
    expect(s3.objects.get(`lf-results/pod/${name}/run.json`)?.toString()).toBe('{"ok":true}');
    // A wrong token gets nothing from STS, and the upload says so.
    writeFileSync(tokenFile, 'not-the-token');
    const denied = await startNode('coordinator/main.js', ['upload', work, 's3://lf-results/irsa'], {
      ...keyless,
      AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
      AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/loadfleet',
      AWS_ENDPOINT_URL_STS: `${s3.endpoint}/sts`,
    }).done;
    expect(denied.code).toBe(ExitCode.FAILURE);
    expect(denied.stderr).toMatch(
      /LF_UPLOAD_FAILED: STS AssumeRoleWithWebIdentity for arn:aws:iam::123456789012:role\/loadfleet: HTTP 403/,
    );
  });
});
