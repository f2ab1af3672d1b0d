// Copying a run's directory off the results volume: a reader pod of the run's own (two runs never
// share one), tolerating the pool taints the run was given, then `kubectl cp` with retries, checked
// file by file against the sizes on the volume, and the reader deleted.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export function readerPod(o, image) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `loadfleet-results-reader-${o.run}`,
      labels: { 'app.kubernetes.io/name': 'loadfleet', 'app.kubernetes.io/component': 'results-reader', 'loadfleet.io/run': o.run },
    },
    spec: {
      restartPolicy: 'Never',
      ...(o.imagePullSecrets?.length > 0 && { imagePullSecrets: o.imagePullSecrets.map((name) => ({ name })) }),
      // A reader left behind by a killed wrapper goes by itself.
      activeDeadlineSeconds: 3600,
      enableServiceLinks: false,
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
      tolerations: [
        ...o.tolerations,
        ...o.coordinatorTolerations,
        { key: 'loadfleet.io/loadgen', operator: 'Exists', effect: 'NoSchedule' },
      ],
      containers: [
        {
          name: 'reader',
          image,
          command: ['sleep', '3600'],
          resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          volumeMounts: [{ name: 'results', mountPath: '/results', readOnly: true }],
        },
      ],
      volumes: [{ name: 'results', persistentVolumeClaim: { claimName: 'loadfleet-results', readOnly: true } }],
    },
  };
}

function localSizes(dir) {
  const out = new Map();
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(relative(dir, p), statSync(p).size);
    }
  };
  try {
    walk(dir);
  } catch {}
  return out;
}

/** Copies /results/RUN to OUT/RUN; returns { ok, files, bytes, problem? }. */
export function fetchResults(k, o, image, say, attempts = 3) {
  const pod = `loadfleet-results-reader-${o.run}`;
  const target = join(o.out, o.run);
  k.run(['delete', 'pod', pod, '--ignore-not-found', '--wait=true']);
  const applied = k.run(['apply', '-f', '-'], JSON.stringify(readerPod(o, image)));
  if (applied.code !== 0) return { ok: false, problem: `the results reader was not created: ${applied.stderr.trim()}` };
  try {
    if (k.run(['wait', '--for=condition=Ready', `pod/${pod}`, '--timeout=300s']).code !== 0)
      return { ok: false, problem: `the results reader ${pod} did not start (kubectl describe pod ${pod})` };
    const listing = k.run(['exec', pod, '--', 'find', `/results/${o.run}`, '-type', 'f', '-printf', '%s %P\\n']);
    if (listing.code !== 0) return { ok: false, problem: `/results/${o.run} is not on the volume: the coordinator wrote nothing` };
    const remote = new Map(
      listing.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => [l.slice(l.indexOf(' ') + 1), Number(l.slice(0, l.indexOf(' ')))]),
    );
    let missing = [...remote.keys()];
    for (let attempt = 1; attempt <= attempts && missing.length > 0; attempt++) {
      const cp = k.run(['cp', '--retries=10', `${pod}:/results/${o.run}`, target]);
      const local = localSizes(target);
      missing = [...remote].filter(([f, size]) => local.get(f) !== size).map(([f]) => f);
      if (missing.length > 0)
        say(`fetch attempt ${attempt}: ${missing.length} file(s) incomplete${cp.code !== 0 ? ` (${cp.stderr.trim()})` : ''}`);
    }
    const bytes = [...remote.values()].reduce((a, b) => a + b, 0);
    if (missing.length > 0)
      return { ok: false, files: remote.size, bytes, problem: `incomplete after ${attempts} attempts: ${missing.join(', ')}` };
    return { ok: true, files: remote.size, bytes };
  } finally {
    k.run(['delete', 'pod', pod, '--wait=false', '--ignore-not-found']);
  }
}
