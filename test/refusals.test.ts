// Bad input and faults around the run itself: invalid plans, wrong tokens, other protocol
// versions, malformed frames, an agent that cannot arm in time, and Ctrl-C.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  constantRatePlan,
  listeningCoordinator,
  onlyRunDir,
  readRequests,
  readRunJson,
  runCoordinator,
  startNode,
  tempDir,
  waitFor,
  writePlan,
} from './harness.js';

const TINY = constantRatePlan('tiny', 2, 5, { input_tokens: 8, output_tokens: 4 });

function rawConnect(url: string, headers: Record<string, string>): Promise<{ status?: number; body?: string; ws?: WebSocket }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url}/agents`, { headers });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('open', () => resolve({ ws }));
    ws.on('error', () => {});
  });
}

describe('refusals and early ends', () => {
  it('refuses a plan that could not be judged: intended basis on sessions, a canary on a per-request class', async () => {
    const work = tempDir();
    const bad = {
      ...TINY,
      classes: [
        {
          name: 'chat',
          prompt: { output_tokens: 4 },
          slo: { ttft_p95_ms: 500, basis: 'intended' },
          load: {
            model: 'sessions',
            phases: [{ start_s: 0, duration_s: 2, rate_per_s: 1 }],
            session: { turns: 2, think_time_s: 0, user_tokens: 8 },
          },
        },
        {
          ...TINY.classes[0],
          name: 'mixed',
          prompt: { input_tokens: { distribution: 'uniform', min: 4, max: 12 }, output_tokens: 4, canary: true },
        },
      ],
    };
    const res = await runCoordinator(['--plan', writePlan(work, bad), '--out', join(work, 'out')]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/classes\[0\]\.slo\.basis: "intended" cannot judge a sessions class/);
    expect(res.stderr).toMatch(/classes\[1\]\.prompt\.canary: not allowed with a length distribution/);
    expect(existsSync(join(work, 'out'))).toBe(false);
  });

  it('rejects an invalid plan with every problem and its path, exit 2, nothing started', async () => {
    const work = tempDir();
    const bad = {
      ...TINY,
      seed: -1,
      duration_s: 0,
      colour: 'red',
      classes: [{ ...TINY.classes[0], load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 1, rate_per_s: -2 }] } }],
    };
    const res = await runCoordinator(['--plan', writePlan(work, bad), '--out', join(work, 'out')]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/LF_PLAN_INVALID/);
    expect(res.stderr).toMatch(/seed: /);
    expect(res.stderr).toMatch(/duration_s: /);
    expect(res.stderr).toMatch(/colour: unknown key/);
    expect(res.stderr).toMatch(/classes\[0\]\.load\.phases\[0\]\.rate_per_s: must be > 0/);
    expect(existsSync(join(work, 'out'))).toBe(false);
  });

  it('refuses wrong tokens, other protocol versions and malformed frames without crashing, then runs', async () => {
    const work = tempDir();
    const { coord, url } = await listeningCoordinator(
      ['--agents', '1', '--token', 'right-token', '--plan', writePlan(work, TINY), '--out', join(work, 'out'), '--join-timeout-s', '60'],
      {},
    );
    const wrong = await startNode('agent/main.js', ['--coordinator', url, '--token', 'wrong-token', '--connect-timeout-s', '5']).done;
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/LF_AUTH_REFUSED.*HTTP 401/);
    const noToken = await rawConnect(url, { 'x-loadfleet-protocol': '1' });
    expect(noToken.status).toBe(401);
    const oldProtocol = await rawConnect(url, { authorization: 'Bearer right-token', 'x-loadfleet-protocol': '0' });
    expect(oldProtocol.status).toBe(426);
    expect(oldProtocol.body).toMatch(/LF_PROTOCOL_MISMATCH: coordinator speaks protocol 3, agent sent 0/);
    const garbage = await rawConnect(url, { authorization: 'Bearer right-token', 'x-loadfleet-protocol': '3' });
    const closed = new Promise<number>((r) => garbage.ws!.on('close', (code) => r(code)));
    garbage.ws!.send(Buffer.from([0xde, 0xad, 0xbe, 0xef]));
    expect(await closed).toBe(4002);
    const agent = startNode('agent/main.js', ['--coordinator', url, '--id', 'good'], { LOADFLEET_TOKEN: 'right-token' });
    const [res, agentRes] = await Promise.all([coord.done, agent.done]);
    expect(res.code, res.stderr).toBe(0);
    expect(agentRes.code).toBe(0);
    expect(res.stderr).toMatch(/refused a connection .*LF_AUTH_REFUSED/);
    expect(res.stderr).toMatch(/ignored a malformed frame/);
    expect(res.stderr).not.toMatch(/right-token/); // the token is never logged
    const run = readRunJson(onlyRunDir(join(work, 'out')));
    expect(run.requests).toBe(10);
    expect(run.agents.map((a: any) => a.agent_id)).toEqual(['good']);
  });

  it('serves wss:// with --tls-cert/--tls-key; an agent needs --ca to trust it', async () => {
    const work = tempDir();
    const cert = join(work, 'cert.pem');
    const key = join(work, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const { coord, url } = await listeningCoordinator(
      ['--agents', '1', '--tls-cert', cert, '--tls-key', key, '--plan', writePlan(work, TINY), '--out', join(work, 'out')],
      { LOADFLEET_TOKEN: 'tls-token' },
    );
    // Neither can ever succeed, so each says why once and exits 2 instead of retrying for a minute.
    const untrusting = await startNode('agent/main.js', ['--coordinator', url, '--connect-timeout-s', '60'], {
      LOADFLEET_TOKEN: 'tls-token',
    }).done;
    expect(untrusting.code).toBe(2);
    expect(untrusting.stderr).toMatch(/LF_TLS_MISMATCH: the coordinator's certificate is not trusted .*self[- ]signed.*--ca FILE/i);
    const plain = await startNode('agent/main.js', ['--coordinator', url.replace('wss://', 'ws://'), '--connect-timeout-s', '60'], {
      LOADFLEET_TOKEN: 'tls-token',
    }).done;
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/LF_TLS_MISMATCH: the coordinator at 127\.0\.0\.1:\d+ speaks TLS; use wss:\/\//);
    const agent = await startNode('agent/main.js', ['--coordinator', url, '--ca', cert], { LOADFLEET_TOKEN: 'tls-token' }).done;
    expect(agent.code, agent.stderr).toBe(0);
    expect((await coord.done).code).toBe(0);
    expect(readRunJson(onlyRunDir(join(work, 'out'))).requests).toBe(10);
  });

  it('aborts before any load is sent when an agent cannot arm in time, naming it', async () => {
    const work = tempDir();
    const res = await runCoordinator([
      '--agents',
      '2',
      '--plan',
      writePlan(work, TINY),
      '--out',
      join(work, 'out'),
      '--agent-arg=--test-arm-delay-ms=4000',
    ]);
    expect(res.code).toBe(3);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    expect(run.status).toBe('aborted');
    expect(run.status_reason).toMatch(/aborted before any load was sent: agents agent-1, agent-2 did not arm in time/);
    expect(readRequests(dir)).toHaveLength(0);
    expect(run.requests).toBe(0);
  });

  it('stops on Ctrl-C and still writes valid artifacts with status aborted', async () => {
    const work = tempDir();
    const long = {
      ...TINY,
      duration_s: 30,
      classes: [
        { ...TINY.classes[0]!, load: { model: 'constant-rate' as const, phases: [{ start_s: 0, duration_s: 30, rate_per_s: 10 }] } },
      ],
    };
    const coord = startNode('coordinator/main.js', ['start', '--agents', '2', '--plan', writePlan(work, long), '--out', join(work, 'out')]);
    await waitFor(coord.child.stderr!, /t=3s/);
    coord.child.kill('SIGINT');
    const res = await coord.done;
    expect(res.code).toBe(3);
    const dir = onlyRunDir(join(work, 'out'));
    // The embedded engine-sim was scraped until the stop, and the report drawn from what there is.
    expect(readdirSync(dir).sort()).toEqual([
      'benchmark-report.json',
      'benchmark-report.yaml',
      'epp.post.prom',
      'epp.pre.prom',
      'histograms.hlog',
      'report.html',
      'requests.ndjson',
      'run.json',
      'server-metrics.csv',
      'server-scrapes.csv',
      'traffic.csv',
      'vllm.post.prom',
      'vllm.pre.prom',
    ]);
    const run = readRunJson(dir);
    expect(run.status).toBe('aborted');
    expect(run.status_reason).toMatch(/interrupted by the user/);
    const rows = readRequests(dir);
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBe(run.requests);
    expect(run.agents.every((a: any) => a.status === 'ok')).toBe(true);
  });
});
