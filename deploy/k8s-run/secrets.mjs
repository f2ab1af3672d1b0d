// The run's own secrets, made where the wrapper runs and never written to git: a 32-byte token, a
// CA for this run only and the coordinator's certificate for every name agents may dial, signed
// by that CA (which agents pin). The CA's key is deleted once the certificate is signed.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function makeSecrets(dir, run, namespace) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const service = `loadfleet-coordinator-${run}`;
  const ssl = (args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  writeFileSync(join(dir, 'token'), ssl(['rand', '-hex', '32']).toString().trim(), { mode: 0o600 });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ssl(['req', '-x509', ...ec, '-days', '30', '-subj', `/CN=loadfleet run ${run} CA`, '-keyout', 'ca.key', '-out', 'ca.crt']);
  ssl(['req', ...ec, '-subj', `/CN=${service}`, '-keyout', 'tls.key', '-out', 'tls.csr']);
  const names = [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
  writeFileSync(join(dir, 'san.ext'), `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\n`);
  ssl([
    'x509',
    '-req',
    '-in',
    'tls.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '30',
    '-extfile',
    'san.ext',
    '-out',
    'tls.crt',
  ]);
  for (const f of ['ca.key', 'tls.csr', 'ca.srl', 'san.ext']) rmSync(join(dir, f), { force: true });
}
