// The coordinator authenticates itself first: an agent given the run's CA (--ca, as the Kubernetes
// and systemd assets do) sends its token only to a server holding a certificate that CA signed for
// the address it dials. An impostor on the coordinator's address never sees a request; the real
// coordinator with a CA-signed certificate (the layout deploy/bin/loadfleet-k8s makes) runs.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { constantRatePlan, listeningCoordinator, onlyRunDir, readRunJson, startNode, tempDir, writePlan } from './harness.js';

/** A CA and a server certificate it signs for `san`, as deploy/bin/loadfleet-k8s makes them. */
function pki(
  dir: string,
  name: string,
  san: string,
  ca?: { crt: string; key: string },
): { ca: string; caKey: string; cert: string; key: string } {
  const f = (s: string) => join(dir, `${name}-${s}`);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const caCrt = ca?.crt ?? f('ca.crt');
  const caKey = ca?.key ?? f('ca.key');
  if (!ca)
    ssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${name} CA`,
      '-keyout',
      caKey,
      '-out',
      caCrt,
    );
  ssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    '/CN=coordinator',
    '-keyout',
    f('tls.key'),
    '-out',
    f('tls.csr'),
  );
  writeFileSync(f('san.ext'), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  ssl(
    'x509',
    '-req',
    '-in',
    f('tls.csr'),
    '-CA',
    caCrt,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    f('san.ext'),
    '-out',
    f('tls.crt'),
  );
  return { ca: caCrt, caKey, cert: f('tls.crt'), key: f('tls.key') };
}

/** An HTTPS server with `cert` that records every request it gets (a WebSocket upgrade included). */
async function recordingServer(cert: { cert: string; key: string }) {
  const seen: string[] = [];
  const server = createServer({ cert: readFileSync(cert.cert), key: readFileSync(cert.key) }, (req, res) => {
    seen.push(JSON.stringify(req.headers));
    res.end();
  });
  server.on('upgrade', (req, socket) => {
    seen.push(JSON.stringify(req.headers));
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { seen, url: `wss://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

describe('agents pin the run CA', () => {
  const work = tempDir();
  const env = { LOADFLEET_TOKEN: 'pinned-token' };

  it('an impostor on the address gets no request, hence no token; a wrong name is refused too', async () => {
    const run = pki(work, 'run', 'IP:127.0.0.1');
    const impostor = pki(work, 'impostor', 'IP:127.0.0.1');
    const fake = await recordingServer(impostor);
    const agent = await startNode('agent/main.js', ['--coordinator', fake.url, '--ca', run.ca, '--connect-timeout-s', '30'], env).done;
    fake.close();
    expect(agent.code).toBe(ExitCode.INVALID_INPUT);
    expect(agent.stderr).toMatch(/LF_TLS_MISMATCH: the coordinator's certificate is not trusted/);
    expect(fake.seen, 'the impostor saw nothing: the token was never sent').toEqual([]);

    // Signed by the run's CA, but for another name than the one dialled: refused as well.
    const other = pki(work, 'other-name', 'DNS:loadfleet-coordinator-other', { crt: run.ca, key: run.caKey });
    const misnamed = await recordingServer(other);
    const agent2 = await startNode('agent/main.js', ['--coordinator', misnamed.url, '--ca', run.ca, '--connect-timeout-s', '30'], env).done;
    misnamed.close();
    expect(agent2.code).toBe(ExitCode.INVALID_INPUT);
    expect(agent2.stderr).toMatch(/LF_TLS_MISMATCH: the coordinator's certificate is not trusted .*(altnames|IP)/i);
    expect(misnamed.seen).toEqual([]);
  });

  it('the coordinator with a certificate the run CA signed runs the plan', async () => {
    const run = pki(work, 'good', 'IP:127.0.0.1');
    const { coord, url } = await listeningCoordinator(
      [
        '--agents',
        '1',
        '--tls-cert',
        run.cert,
        '--tls-key',
        run.key,
        '--plan',
        writePlan(work, constantRatePlan('pinned', 1, 5)),
        '--out',
        join(work, 'out'),
      ],
      env,
    );
    expect(url).toMatch(/^wss:/);
    const agent = await startNode('agent/main.js', ['--coordinator', url, '--ca', run.ca], env).done;
    expect(agent.code, agent.stderr).toBe(0);
    expect((await coord.done).code).toBe(0);
    expect(readRunJson(onlyRunDir(join(work, 'out'))).requests).toBe(5);
  }, 60_000);
});
