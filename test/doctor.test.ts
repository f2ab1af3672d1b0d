// `loadfleet doctor` and `loadfleet init` end to end: the real command against real loopback
// servers — engine-sim (chat and completions, gateway mode, reasoning, a server without usage),
// a server that refuses the key, nothing listening, TLS against plain HTTP — each report saying
// what it should; and a starter plan that validates and runs.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlanFile } from '../shared/plan-load.js';
import { CLONE_LOADFLEET, freePort, loadfleet, onlyRunDir, readRunJson, startSim, tempDir } from './harness.js';

async function doctorJson(
  url: string,
  more: string[] = [],
  env: Record<string, string> = {},
): Promise<{ code: number | null; report: any }> {
  const res = await loadfleet(['doctor', url, '--json', '--timeout-s', '10', ...more], env);
  expect(res.stderr).toBe('');
  return { code: res.code, report: JSON.parse(res.stdout) };
}

describe('loadfleet doctor against engine-sim', () => {
  const sims: Array<{ stop(): void }> = [];
  afterAll(() => {
    for (const s of sims) s.stop();
  });
  const sim = async (args: string[]) => {
    const s = await startSim(args);
    sims.push(s);
    return s.baseUrl;
  };

  it('chat, completions and the Messages API stream with usage; its tokenize dialect and vLLM metrics are found; a bare host gets /v1', async () => {
    const base = await sim(['--ttft-ms', '5', '--itl-ms', '1']);
    const { code, report } = await doctorJson(base.replace(/\/v1$/, ''));
    expect(code).toBe(0);
    expect(report).toMatchObject({
      schema: 'loadfleet.doctor/v1',
      base_url: base,
      model: 'loadfleet-sim',
      loadable: true,
      preferred_api: 'chat',
    });
    expect(report.models).toMatchObject({ ok: true, served: ['loadfleet-sim'], max_model_len: 32768 });
    for (const api of ['chat', 'completions', 'anthropic']) {
      expect(report.apis[api]).toMatchObject({
        reachable: true,
        streams: true,
        usage: 'streamed',
        ignore_eos: 'accepted',
        reasoning_fields: [],
      });
      expect(report.apis[api].content_chunks).toBe(24); // ignore_eos: exactly max_tokens
    }
    // engine-sim counts one token per word: the 8-word probe prompt.
    expect(report.tokenize).toMatchObject({ dialect: 'vLLM/SGLang', probe_tokens: 8, prompt_length_method: 'server-tokenize' });
    expect(report.metrics).toHaveLength(1);
    expect(report.metrics[0]).toMatchObject({ url: `${base.replace(/\/v1$/, '')}/metrics`, ok: true, stacks: ['vLLM'] });
    expect(report.notes).toEqual([]);
    expect(report.apis.anthropic.detail).toMatch(/ending in message_stop/);
    expect(report.apis.anthropic.stream_options).toBeNull();
    expect(report.requests_made).toBeLessThanOrEqual(13);
    expect(Object.keys(report.definitions)).toEqual(expect.arrayContaining(['requests_made', 'first_byte_ms', 'probe_tokens']));
  });

  it('gateway mode: the vLLM and the gateway families are named; the text report says so', async () => {
    const base = await sim(['--gateway']);
    const { report } = await doctorJson(base);
    expect(report.metrics[0].stacks).toEqual(['vLLM', 'gateway']);
    const text = await loadfleet(['doctor', base]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /verdict: +loadable: chat streams from loadfleet-sim, prompts sized by its \/tokenize \(vLLM\/SGLang\), usage streamed/,
    );
    expect(text.stdout).toContain('vLLM + gateway metrics');
    expect(text.stdout).toContain(`next: ./loadfleet init ${base}`);
  });

  it('a server without usage that streams reasoning: both said, with what loadfleet does about them', async () => {
    const base = await sim(['--fault', 'no-usage-rate=1', '--reasoning-tokens', '3', '--ttft-ms', '5', '--itl-ms', '1']);
    const { code, report } = await doctorJson(base);
    expect(code).toBe(0);
    expect(report.apis.chat).toMatchObject({
      streams: true,
      usage: 'not_sent',
      reasoning_fields: ['reasoning_content'],
      reasoning_chunks: 3,
    });
    expect(report.apis.chat.content_chunks).toBe(21);
    expect(report.notes.join('\n')).toMatch(
      /no usage even with stream_options.include_usage: requests still count as ok.*target.tokenizer/,
    );
    expect(report.notes.join('\n')).toMatch(/reasoning streams as delta.reasoning_content/);
  });
});

describe('loadfleet doctor against servers it cannot load', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // Refuses every request without the key "s3cret", as a hosted provider does.
    server = createServer((req, res) => {
      if (req.headers.authorization === 'Bearer s3cret') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [] }));
        return;
      }
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Invalid API key' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => void server.close());

  it('refused auth is named, with what to do: no key sent, a key not set, a key refused', async () => {
    const none = await doctorJson(url);
    expect(none.code).toBe(1);
    expect(none.report.loadable).toBe(false);
    expect(none.report.requests_made).toBe(1);
    expect(none.report.problems).toEqual([
      'the server refused the request (HTTP 401: Invalid API key) — no API key was sent: pass --api-key-env VAR with the key in $VAR (plans name it as target.api_key_env)',
    ]);
    const unset = await doctorJson(url, ['--api-key-env', 'LF26_UNSET_KEY']);
    expect(unset.report.problems[0]).toMatch(/\$LF26_UNSET_KEY is not set in this environment, so no key was sent$/);
    const wrong = await doctorJson(url, ['--api-key-env', 'LF26_KEY'], { LF26_KEY: 'wrong' });
    expect(wrong.report.problems[0]).toMatch(/HTTP 401: Invalid API key\) — the key in \$LF26_KEY was refused$/);
    // The right key passes /models; an empty model list then asks for --model.
    const right = await doctorJson(url, ['--api-key-env', 'LF26_KEY'], { LF26_KEY: 's3cret' });
    expect(right.report.problems).toEqual(['no model to ask for: /models listed none; pass --model NAME']);
  });

  it('nothing listening, TLS against plain HTTP, and a bad URL: named plainly, non-zero exits', async () => {
    const port = await freePort();
    const refused = await doctorJson(`http://127.0.0.1:${port}/v1`);
    expect(refused.code).toBe(1);
    expect(refused.report.problems).toEqual([
      `nothing listens at 127.0.0.1:${port} (connection refused): is the server up, and is the port right?`,
    ]);
    const tls = await doctorJson(url.replace('http:', 'https:'));
    expect(tls.code).toBe(1);
    expect(tls.report.problems[0]).toMatch(/^TLS failed with .*: the server does not speak TLS on this port: use http:\/\/$/);
    const bad = await loadfleet(['doctor', 'localhost:8000']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/must be http:\/\/ or https:\/\//);
  });
});

describe('loadfleet doctor over TLS', () => {
  it('a certificate this machine does not trust is named, with the fix; trusting its CA gets past TLS', async () => {
    const work = tempDir();
    const cert = join(work, 'cert.pem');
    const key = join(work, 'key.pem');
    const subject = ['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', ...subject], {
      stdio: 'ignore',
    });
    const server = createHttpsServer({ cert: readFileSync(cert), key: readFileSync(key) }, (_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not here"}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      const untrusted = await doctorJson(url);
      expect(untrusted.code).toBe(1);
      expect(untrusted.report.problems[0]).toMatch(
        /^TLS failed with 127\.0\.0\.1:\d+ \(DEPTH_ZERO_SELF_SIGNED_CERT\): its certificate is not signed by a CA this machine trusts: give Node the CA with NODE_EXTRA_CA_CERTS=ca.pem/,
      );
      const trusted = await doctorJson(url, [], { NODE_EXTRA_CA_CERTS: cert });
      expect(trusted.report.problems).toEqual(['no model to ask for: no /models list; pass --model NAME']);
      expect(trusted.report.models.detail).toBe(`${url}/models answered HTTP 404`);
    } finally {
      server.close();
    }
  });
});

describe('loadfleet init', () => {
  it('writes a commented starter plan that validates, and runs it', async () => {
    const sim = await startSim(['--ttft-ms', '20', '--itl-ms', '2']);
    try {
      const work = tempDir();
      const init = await loadfleet(['init', sim.baseUrl, '--rate', '2', '--duration-s', '6'], {}, work);
      expect(init.code, init.stderr).toBe(0);
      expect(init.stdout).toContain('wrote loadfleet.plan.yaml: realtime 2 req/s + batch, 6 s, against loadfleet-sim');
      // Run from elsewhere than the clone's root, the printed command is the clone's command by its path.
      expect(init.stdout).toContain(`${CLONE_LOADFLEET} coordinator start --plan loadfleet.plan.yaml --agents 2`);
      const file = join(work, 'loadfleet.plan.yaml');
      const text = readFileSync(file, 'utf8');
      expect(text).toMatch(/^# yaml-language-server: \$schema=.*examples\/schemas\/loadfleet\.plan\.v1\.schema\.json$/m);
      expect(text).toContain('# The realtime SLO');
      const plan = await loadPlanFile(file);
      expect(plan.classes.map((c) => c.name)).toEqual(['realtime', 'batch']);
      expect(plan.target).toMatchObject({ base_url: sim.baseUrl, api: 'chat', model: 'loadfleet-sim' });
      expect(plan.scrape?.map((s) => s.url)).toEqual([`${sim.baseUrl.replace(/\/v1$/, '')}/metrics`]);
      // A second init does not overwrite it.
      const again = await loadfleet(['init', sim.baseUrl], {}, work);
      expect(again.code).toBe(2);
      expect(again.stderr).toContain('loadfleet.plan.yaml exists');

      const run = await loadfleet(
        ['coordinator', 'start', '--plan', 'loadfleet.plan.yaml', '--agents', '2', '--out', 'runs', '--quiet'],
        {},
        work,
      );
      expect(run.code, run.stderr).toBe(0);
      const result = readRunJson(onlyRunDir(join(work, 'runs')));
      expect(result.status).not.toBe('aborted');
      expect(result.classes.realtime.prompt_length_method).toBe('server-tokenize');
      expect(result.classes.realtime.windows.all.requests).toBeGreaterThan(0);
      expect(result.classes.batch.windows.all.requests).toBeGreaterThan(0);
      expect(result.classes.realtime.slo_verdict).toBeDefined();
    } finally {
      sim.stop();
    }
  });
});
