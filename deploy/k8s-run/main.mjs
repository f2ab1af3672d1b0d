// loadfleet-k8s: one run on Kubernetes with one command (docs/kubernetes.md).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { readInputs } from './inputs.mjs';
import { kubectl } from './kube.mjs';
import { runKustomization } from './kustomization.mjs';
import { parseArgs, runOptions, UsageError } from './options.mjs';
import { fetchResults } from './results.mjs';
import { deleteAndCheck, runCommand } from './run.mjs';
import { makeSecrets } from './secrets.mjs';
import { policyPorts } from './target-port.mjs';

const K8S = resolve(dirname(new URL(import.meta.url).pathname), '../k8s');
const USAGE = `usage:
  loadfleet-k8s run    --image REF (--plan F | --sweep F | --experiment F) [flags]   apply, follow, fetch, clean up
  loadfleet-k8s render --image REF (--plan F | --sweep F | --experiment F) [flags]   print what run would apply
  loadfleet-k8s fetch  NAME [-n NS] [--out DIR] [--image REF] [--image-pull-secret S]  copy /results/NAME/ off the volume
  loadfleet-k8s delete NAME [-n NS]                                                  delete the run's objects (not its results)
flags:
  --run NAME  -n/--namespace NS  --agents N (2)  --max-agent-loss K (0)  --deadline D (2h; sweep/experiment 24h)
  --cpus C (2: C-1 workers + 1 core for the agent's main thread)  --memory M (1Gi)
  --coordinator-cpus C (2)  --coordinator-memory M (2Gi)
  --node-selector k=v,...  --tolerations key[=value][:Effect],...   (the agents' pool; the coordinator stays off it)
  --coordinator-node-selector k=v,...  --coordinator-tolerations ...
  --target-selector k=v,... [--target-namespace NS] | --target-cidr CIDR,...  [--target-port P,...] [--egress-cidr CIDR,...]
      (NetworkPolicies on: the target by pod labels, which every CNI matches, or by address)
      (without --target-port the policy's port is read from the target Service's targetPort)
  --workload-claim PVC  --service-monitor [--service-monitor-labels release=kps,...]
  --service-account SA (the coordinator's: IRSA, EKS Pod Identity)  --image-pull-secret NAME,...  --priority-class NAME
  --listen-host :: | 0.0.0.0 (::, IPv6 and IPv4)  --fail-on-slo (exit 4 when a class missed its SLO; --plan only)
  --start-timeout S (300: no progress for S seconds ends the run)  --cleanup post|never (post)
  --out DIR (./runs)  --autoscaled (the pool grows on demand: room is a warning)  --no-room-check  --no-preflight
exit: 0 completed, 1 the cluster refused or lost the run, 2 invalid input, 3 aborted, 4 SLO missed (--fail-on-slo), 6 degraded`;

function currentNamespace(k) {
  const r = k.run(['config', 'view', '--minify', '-o', 'jsonpath={..namespace}']);
  return r.stdout.trim() || 'default';
}

/** Writes the run's kustomization, its inputs and secrets into a fresh directory. */
async function prepare(o, say) {
  const inputs = await readInputs(o);
  if (o.networkPolicy) {
    const { ports, notes } = policyPorts(kubectl, o, inputs);
    inputs.policyPorts = ports;
    for (const n of notes) say(n);
  }
  const work = mkdtempSync(join(tmpdir(), `loadfleet-k8s-${o.run}-`));
  mkdirSync(join(work, 'inputs'));
  for (const [name, text] of Object.entries(inputs.files)) writeFileSync(join(work, 'inputs', name), text);
  makeSecrets(join(work, 'secrets'), o.run, o.namespace);
  const paths = { base: relative(work, join(K8S, 'base')), components: relative(work, join(K8S, 'components')) };
  writeFileSync(join(work, 'kustomization.yaml'), `${JSON.stringify(runKustomization(o, inputs, paths), null, 2)}\n`);
  return { work, inputs };
}

async function main(argv) {
  const [command, ...rest] = argv;
  const say = (l) => process.stdout.write(`${l}\n`);
  const warn = (l) => process.stderr.write(`${l}\n`);
  if (command === 'run' || command === 'render') {
    const o = runOptions({ ...parseArgs(rest), command });
    const k = kubectl(o.namespace);
    o.namespace = o.namespace ?? currentNamespace(k);
    const { work, inputs } = await prepare(o, warn);
    try {
      if (!inputs.validated)
        warn('loadfleet-k8s: the repository is not built (npm ci && npm run build): the input files were not validated');
      if (command === 'render') {
        const r = k.run(['kustomize', work]);
        if (r.code !== 0) throw new Error(r.stderr);
        process.stdout.write(r.stdout);
        return 0;
      }
      return await runCommand(kubectl(o.namespace), o, work, say, warn);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  if (command === 'fetch' || command === 'delete') {
    const [run, ...flags] = rest;
    if (!run || run.startsWith('-')) throw new UsageError(`loadfleet-k8s ${command} NAME`);
    const raw = parseArgs(flags);
    const k = kubectl(raw.namespace);
    if (command === 'delete') {
      const left = deleteAndCheck(k, run, { serviceMonitor: raw.serviceMonitor === true });
      if (left.length === 0) say(`run ${run}: deleted, nothing of it is left (its results stay on the volume)`);
      else warn(`run ${run}: left behind: ${left.join(', ')}`);
      return left.length === 0 ? 0 : 1;
    }
    // The reader runs the run's own image when it is still known from its coordinator Job.
    const image =
      raw.image ??
      k.run(['get', 'job', `loadfleet-coordinator-${run}`, '-o', 'jsonpath={.spec.template.spec.containers[0].image}']).stdout.trim();
    if (!image) throw new UsageError(`the run's coordinator Job is gone: give --image REF for the reader pod`);
    const o = { run, out: raw.out ?? './runs', tolerations: [], coordinatorTolerations: [], imagePullSecrets: raw.imagePullSecret ?? [] };
    const r = fetchResults(k, o, image, warn);
    if (!r.ok) throw new Error(r.problem);
    say(`results: ${join(o.out, run)} (${r.files} files, ${r.bytes} bytes)`);
    return 0;
  }
  if (command === '-h' || command === '--help' || command === 'help') {
    say(USAGE);
    return 0;
  }
  throw new UsageError(USAGE);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`loadfleet-k8s: ${err.message}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
