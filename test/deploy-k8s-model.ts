// What the deploy tests share: rendering a kustomization (or the wrapper's render of a set of
// flags) with the real `kubectl kustomize`, the schema validators per kind, and small readers of
// the rendered objects (jobs by role, selectors, flags, the Job controller's per-index rule).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Pod } from 'kubernetes-models/v1/Pod';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { expect } from 'vitest';
import { parseAllDocuments } from 'yaml';

export const DEPLOY = fileURLToPath(new URL('../deploy/', import.meta.url));
export const KUBECTL = process.env['KUBECTL'] ?? 'kubectl';
export const HAS_KUBECTL = spawnSync(KUBECTL, ['version', '--client'], { stdio: 'ignore' }).status === 0;
export const COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']";
/** Image UID of deploy/Dockerfile's USER; the pods' runAsUser must match it. */
export const IMAGE_UID = 10001;

type Validator = (obj: unknown) => { validate(): void };
const model =
  <D>(Ctor: new (data: D) => { validate(): void }): Validator =>
  (obj) =>
    new Ctor(obj as D);
// Every kind the manifests may contain; any other kind fails the test.
export const MODELS: Record<string, Validator> = {
  'apps/v1 Deployment': model(Deployment),
  'batch/v1 Job': model(Job),
  'networking.k8s.io/v1 NetworkPolicy': model(NetworkPolicy),
  'policy/v1 PodDisruptionBudget': model(PodDisruptionBudget),
  'v1 ConfigMap': model(ConfigMap),
  'v1 PersistentVolumeClaim': model(PersistentVolumeClaim),
  'v1 Pod': model(Pod),
  'v1 Secret': model(Secret),
  'v1 Service': model(Service),
  // cert-manager's CRDs have no schema package here: the fields loadfleet relies on, by hand
  // (cert-manager.io/v1 API reference).
  'cert-manager.io/v1 Certificate': (obj) => ({
    validate() {
      const spec = (obj as { spec?: Record<string, unknown> }).spec ?? {};
      const ref = spec['issuerRef'] as { name?: unknown; kind?: unknown } | undefined;
      if (typeof spec['secretName'] !== 'string') throw new Error('spec.secretName: required string');
      if (typeof ref?.name !== 'string' || !['Issuer', 'ClusterIssuer'].includes(String(ref.kind))) throw new Error('spec.issuerRef');
      if (!spec['commonName'] && !Array.isArray(spec['dnsNames'])) throw new Error('spec.commonName or spec.dnsNames: one is required');
    },
  }),
  // prometheus-operator's ServiceMonitor, by hand too (monitoring.coreos.com/v1 API reference).
  'monitoring.coreos.com/v1 ServiceMonitor': (obj) => ({
    validate() {
      const spec = (obj as { spec?: { selector?: { matchLabels?: unknown }; endpoints?: { port?: unknown }[] } }).spec;
      if (typeof spec?.selector?.matchLabels !== 'object') throw new Error('spec.selector.matchLabels');
      if (!spec.endpoints?.length || spec.endpoints.some((e) => typeof e.port !== 'string')) throw new Error('spec.endpoints[].port');
    },
  }),
  'cert-manager.io/v1 Issuer': (obj) => ({
    validate() {
      const spec = (obj as { spec?: Record<string, unknown> }).spec ?? {};
      const kinds = ['selfSigned', 'ca', 'acme', 'vault', 'venafi'].filter((k) => k in spec);
      if (kinds.length !== 1) throw new Error(`spec: exactly one issuer type, got ${kinds.join(', ') || 'none'}`);
      if (kinds[0] === 'ca' && typeof (spec['ca'] as { secretName?: unknown }).secretName !== 'string')
        throw new Error('spec.ca.secretName');
    },
  }),
};

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
}

export const RUN_LABEL = 'loadfleet.io/run';
export const overlays = readdirSync(join(DEPLOY, 'k8s/overlays')).map((o) => `overlays/${o}`);
/** An image reference the wrapper accepts (it refuses to run without --image). */
export const TEST_IMAGE = 'registry.example.com/loadfleet:0.1.0';
/**
 * What the wrapper (deploy/bin/loadfleet-k8s render) makes of its flags, `run:<case>`: the dry run
 * against engine-sim, an experiment, a 16-agent sweep on a tainted pool with an in-cluster SGLang
 * target, and a plan against a target by address with workload files and a ServiceMonitor.
 */
export const WRAPPED: Record<string, string[]> = {
  'run:engine-sim': [
    ...['--plan', 'k8s/overlays/engine-sim/plan.json', '--target-selector', 'app.kubernetes.io/component=engine-sim'],
    ...['--target-port', '8000'],
  ],
  'run:experiment': ['--experiment', 'k8s/overlays/experiment/experiment.json'],
  'run:sweep-16': [
    ...['--sweep', 'k8s/overlays/sweep/sweep.json', '--agents', '16', '--max-agent-loss', '1', '--cpus', '4', '--deadline', '30h'],
    ...['--node-selector', 'loadfleet.io/pool=loadgen', '--tolerations', 'loadfleet.io/loadgen=true:NoSchedule,gpu:NoSchedule'],
    ...['--target-selector', 'app.kubernetes.io/name=sglang', '--target-namespace', 'llm', '--target-port', '30000'],
  ],
  'run:plan-cidr': [
    ...['--plan', 'k8s/base/plan.json', '--agents', '3', '--max-agent-loss', '1', '--deadline', '3h', '--memory', '2Gi'],
    ...['--target-cidr', '10.8.0.0/14', '--egress-cidr', '52.216.0.0/15', '--workload-claim', 'traces', '--service-monitor'],
  ],
};
export const runKustomizations = ['base', ...overlays, ...Object.keys(WRAPPED)];
/** Kustomizations that are not a run: applied once per namespace. */
export const standing = ['results', 'results-reader', 'engine-sim', 'grafana'];
const rendered = new Map<string, K8sObject[]>();
/** The run name the wrapper renders with in these tests. */
export const WRAPPED_RUN = 'r27';

/** The wrapper's stdout, stderr and status for these arguments (no cluster: `render` only asks kubectl to kustomize). */
export function wrapper(args: string[]) {
  return spawnSync(join(DEPLOY, 'bin/loadfleet-k8s'), args, { encoding: 'utf8', env: { ...process.env, KUBECTL } });
}

export function render(dir: string): K8sObject[] {
  let objects = rendered.get(dir);
  if (!objects) {
    const wrapped = dir.startsWith('run:');
    const flags = (WRAPPED[dir] ?? []).map((a) => (a.startsWith('k8s/') ? join(DEPLOY, a) : a));
    const out = wrapped
      ? wrapper(['render', ...flags, '--image', TEST_IMAGE, '--run', WRAPPED_RUN, '-n', 'lf27'])
      : spawnSync(KUBECTL, ['kustomize', join(DEPLOY, 'k8s', dir)], { encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`render ${dir} failed:\n${out.stderr}`);
    objects = parseAllDocuments(out.stdout).map((d) => d.toJS() as K8sObject);
    // kustomize wraps a generated Secret's base64 over lines; the API server's decoder skips the
    // newlines, the schema's "byte" format does not.
    for (const o of objects) {
      const data = o.kind === 'Secret' ? (o as K8sObject & { data?: Record<string, string> }).data : undefined;
      for (const [k, v] of Object.entries(data ?? {})) data![k] = v.replace(/\s/g, '');
    }
    rendered.set(dir, objects);
  }
  return objects;
}

/** Forgets a render, so the next is a new run (new token, new CA). */
export const forget = (dir: string) => rendered.delete(dir);

export const ofKind = <T>(objects: K8sObject[], is: (v: unknown) => v is T): (T & K8sObject)[] =>
  objects.filter((o): o is T & K8sObject => is(o));
export const jobs = (objects: K8sObject[], component: string) =>
  ofKind(objects, Job.is).filter((j) => j.metadata?.labels?.['app.kubernetes.io/component'] === component);
export const named = <T extends K8sObject>(objects: T[], name: string): T | undefined => objects.find((o) => o.metadata.name === name);

export function podSpecs(objects: K8sObject[]): IPodSpec[] {
  const templated = [...ofKind(objects, Job.is), ...ofKind(objects, Deployment.is)].map((o) => o.spec?.template.spec);
  return [...templated, ...ofKind(objects, Pod.is).map((p) => p.spec)].filter((s) => s !== undefined);
}
export const containersOf = (spec: IPodSpec): IContainer[] => [...(spec.initContainers ?? []), ...spec.containers];
export const allContainers = (objects: K8sObject[]): IContainer[] => podSpecs(objects).flatMap(containersOf);

/** The value of `--name=VALUE` in a container's args, with `$(VAR)` references to plain env values expanded. */
export function flag(c: IContainer, name: string): string | undefined {
  const arg = c.args?.find((a) => a.startsWith(`--${name}=`));
  const env = new Map((c.env ?? []).map((e) => [e.name, e.value]));
  return arg?.slice(name.length + 3).replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (ref, v: string) => env.get(v) ?? ref);
}

export const matches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean =>
  selector !== undefined && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** The Secret a pod's volume or env names, under kustomize's suffixes: its base name. */
export const baseName = (name: string | undefined): string => (name ?? '').replace(new RegExp(`-${WRAPPED_RUN}(-[a-z0-9]{10})?$`), '');

/** The coordinator's subcommand: `start` (one run) or `sweep` / `experiment` (a fleet that serves many). */
export const commandOf = (objects: K8sObject[]): string =>
  onlyOne(jobs(objects, 'coordinator'), 'coordinator Jobs').spec!.template.spec!.containers[0]!.args?.[1] ?? '';

export function onlyOne<T>(items: T[], what: string): T {
  expect(items, what).toHaveLength(1);
  return items[0]!;
}

export type Selector = { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
/** Whether a label selector (matchLabels and In/NotIn/Exists expressions) selects these labels. */
export function selects(sel: Selector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!sel) return false;
  const l = labels ?? {};
  if (!matches(sel.matchLabels ?? {}, l)) return false;
  return (sel.matchExpressions ?? []).every((e) => {
    const v = l[e.key];
    if (e.operator === 'In') return v !== undefined && (e.values ?? []).includes(v);
    if (e.operator === 'NotIn') return v === undefined || !(e.values ?? []).includes(v);
    if (e.operator === 'Exists') return v !== undefined;
    return v === undefined;
  });
}

/**
 * The Job controller's rule for an Indexed Job (Kubernetes docs, "Backoff limit per index"):
 * whether `failed` agent indexes, each out of retries, make it fail the Job and terminate every
 * other agent. Without backoffLimitPerIndex the Job-wide backoffLimit counts every failure.
 */
export function jobTerminatesOthers(
  spec: { backoffLimit?: number; backoffLimitPerIndex?: number; maxFailedIndexes?: number },
  failed: number,
): boolean {
  if (spec.backoffLimitPerIndex === undefined) return failed > (spec.backoffLimit ?? 6);
  return spec.maxFailedIndexes !== undefined && failed > spec.maxFailedIndexes;
}

export const podTemplateLabels = (j: { spec?: { template: { metadata?: { labels?: Record<string, string> } } } }) =>
  j.spec?.template.metadata?.labels ?? {};
