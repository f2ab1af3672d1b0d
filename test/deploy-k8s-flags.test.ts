// The wrapper's flags, rendered offline (`loadfleet-k8s render`, which only asks kubectl to
// kustomize): every number a flag sets lands in every field that must agree with it, and input
// that cannot make a run is refused with exit 2 before anything is rendered or applied.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ExitCode } from '../shared/errors.js';
import {
  allContainers,
  baseName,
  DEPLOY,
  flag,
  HAS_KUBECTL,
  jobs,
  type K8sObject,
  ofKind,
  onlyOne,
  RUN_LABEL,
  render,
  TEST_IMAGE,
  WRAPPED_RUN,
  wrapper,
} from './deploy-k8s-model.js';
import { tempDir } from './harness.js';
import { skipFor } from './require.js';

const agentsOf = (objects: K8sObject[]) => onlyOne(jobs(objects, 'agent'), 'agent Jobs');
const coordinatorOf = (objects: K8sObject[]) => onlyOne(jobs(objects, 'coordinator'), 'coordinator Jobs');
const env = (job: IJob, name: string) => job.spec!.template.spec!.containers[0]!.env?.find((e) => e.name === name)?.value;
const targetRule = (objects: K8sObject[]) =>
  ofKind(objects, NetworkPolicy.is).find((p) => baseName(p.metadata?.name) === 'loadfleet-target')?.spec?.egress;

describe.skipIf(skipFor('the wrapper render tests', HAS_KUBECTL ? null : 'kubectl not found'))('deploy/bin/loadfleet-k8s render', () => {
  it('a 16-agent sweep on a tainted pool: N, K, CPUs, deadline and placement in every field that must agree', () => {
    const objects = render('run:sweep-16');
    const agents = agentsOf(objects);
    const coordinator = coordinatorOf(objects);
    expect(agents.spec).toMatchObject({ completions: 16, parallelism: 16, maxFailedIndexes: 1, backoffLimitPerIndex: 3 });
    expect([env(coordinator, 'LOADFLEET_AGENTS'), env(coordinator, 'LOADFLEET_MAX_AGENT_LOSS')]).toEqual(['16', '1']);
    expect(coordinator.spec!.template.spec!.containers[0]!.args?.slice(0, 3)).toEqual([
      'coordinator',
      'sweep',
      '/etc/loadfleet/plan/sweep.json',
    ]);
    expect(onlyOne(ofKind(objects, PodDisruptionBudget.is), 'PDBs').spec?.minAvailable).toBe(17);
    for (const j of [agents, coordinator]) expect(j.spec?.activeDeadlineSeconds, j.metadata?.name).toBe(30 * 3600);
    const agent = agents.spec!.template.spec!.containers[0]!;
    expect(agent.resources).toEqual({ requests: { cpu: '4', memory: '1Gi' }, limits: { cpu: '4', memory: '1Gi' } });
    expect(Number(flag(agent, 'workers'))).toBe(3);
    const pod = agents.spec!.template.spec!;
    expect(pod.nodeSelector).toEqual({ 'loadfleet.io/pool': 'loadgen' });
    expect(pod.tolerations).toEqual(
      expect.arrayContaining([
        { key: 'loadfleet.io/loadgen', operator: 'Equal', value: 'true', effect: 'NoSchedule' },
        { key: 'gpu', operator: 'Exists', effect: 'NoSchedule' },
        expect.objectContaining({ key: 'node.kubernetes.io/unreachable', tolerationSeconds: 30 }),
      ]),
    );
    // The coordinator may not take a pool node an agent needs.
    expect(
      coordinator.spec!.template.spec!.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    ).toEqual([{ matchExpressions: [{ key: 'loadfleet.io/pool', operator: 'NotIn', values: ['loadgen'] }] }]);
    for (const c of allContainers(objects)) expect(c.image, c.name).toBe(TEST_IMAGE);
  });

  it('an in-cluster target by namespace and pod selector on its own port (SGLang 30000), never by ipBlock', () => {
    expect(targetRule(render('run:sweep-16'))).toEqual([
      {
        to: [
          {
            podSelector: { matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['sglang'] }] },
            namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['llm'] }] },
          },
        ],
        ports: [{ port: 30000, protocol: 'TCP' }],
      },
    ]);
  });

  it("a target by address on the plan's own port, object storage on 443, workload files, a ServiceMonitor for this run", () => {
    const objects = render('run:plan-cidr');
    expect(targetRule(objects)).toEqual([
      { to: [{ ipBlock: { cidr: '10.8.0.0/14' } }], ports: [{ port: 8000, protocol: 'TCP' }] },
      { to: [{ ipBlock: { cidr: '52.216.0.0/15' } }], ports: [{ port: 443, protocol: 'TCP' }] },
    ]);
    for (const j of [agentsOf(objects), coordinatorOf(objects)]) {
      const volume = j.spec!.template.spec!.volumes?.find((v) => v.name === 'workload');
      expect(volume?.persistentVolumeClaim, j.metadata?.name).toEqual({ claimName: 'traces', readOnly: true });
    }
    expect(agentsOf(objects).spec!.template.spec!.containers[0]!.resources?.limits?.['memory']).toBe('2Gi');
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor') as K8sObject & {
      spec: { selector: { matchLabels: Record<string, string> } };
    };
    expect(monitor.spec.selector.matchLabels[RUN_LABEL], 'scoped to this run').toBe(WRAPPED_RUN);
    const service = objects.find((o) => o.kind === 'Service') as K8sObject & { spec: { ports: { name: string; port: number }[] } };
    expect(service.spec.ports.map((p) => p.name)).toContain('metrics');
  });

  it("the operator's knobs: service account (the coordinator's), pull secret and priority class (every pod), ServiceMonitor labels, --fail-on-slo, the listen address", () => {
    const out = wrapper([
      'render',
      ...['--image', TEST_IMAGE, '--run', WRAPPED_RUN, '-n', 'lf', '--plan', join(DEPLOY, 'k8s/base/plan.json')],
      ...['--target-cidr', '10.8.0.0/14', '--service-account', 'loadfleet-s3', '--image-pull-secret', 'regcred,mirror'],
      ...['--priority-class', 'loadgen-high', '--service-monitor-labels', 'release=kube-prometheus-stack', '--fail-on-slo'],
    ]);
    expect(out.status, out.stderr).toBe(0);
    const objects = parseAllDocuments(out.stdout).map((d) => d.toJS() as K8sObject);
    const agents = agentsOf(objects).spec!.template.spec!;
    const coordinator = coordinatorOf(objects).spec!.template.spec!;
    expect(coordinator.serviceAccountName).toBe('loadfleet-s3');
    expect(agents.serviceAccountName, 'agents need no cloud identity').toBeUndefined();
    for (const spec of [agents, coordinator]) {
      expect(spec.imagePullSecrets).toEqual([{ name: 'regcred' }, { name: 'mirror' }]);
      expect(spec.priorityClassName).toBe('loadgen-high');
      expect(spec.automountServiceAccountToken, 'IRSA and Pod Identity project their own token').toBe(false);
    }
    const c = coordinator.containers[0]!;
    expect(c.args?.at(-1)).toBe('--fail-on-slo');
    expect([flag(c, 'listen'), flag(c, 'metrics-host')]).toEqual(['[::]:7000', '::']);
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor')!;
    expect(monitor.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack' });
    // EKS Pod Identity's agent, for the coordinator only, on its port only.
    const podIdentity = ofKind(objects, NetworkPolicy.is).find((p) => baseName(p.metadata?.name) === 'loadfleet-pod-identity')!;
    expect(podIdentity.spec?.podSelector?.matchLabels?.['app.kubernetes.io/component']).toBe('coordinator');
    expect(podIdentity.spec?.egress).toEqual([
      {
        to: [{ ipBlock: { cidr: '169.254.170.23/32' } }, { ipBlock: { cidr: 'fd00:ec2::23/128' } }],
        ports: [{ port: 80, protocol: 'TCP' }],
      },
    ]);
  });

  it('without a target flag no NetworkPolicy is rendered (opt-in)', () => {
    expect(ofKind(render('run:experiment'), NetworkPolicy.is)).toEqual([]);
  });

  const dir = tempDir('loadfleet-k8s-flags-');
  const changeMe = join(dir, 'change-me.json');
  // The base plan as it used to ship: valid, but aimed at a server that does not exist.
  const basePlan = JSON.parse(readFileSync(join(DEPLOY, 'k8s/base/plan.json'), 'utf8')) as { target: object };
  writeFileSync(
    changeMe,
    JSON.stringify({ ...basePlan, target: { ...basePlan.target, base_url: 'http://llm.change-me.svc:8000/v1', model: 'change-me' } }),
  );
  const orphanSweep = join(dir, 'sweep.json');
  const shipped = JSON.parse(readFileSync(join(DEPLOY, 'k8s/overlays/sweep/sweep.json'), 'utf8')) as object;
  writeFileSync(orphanSweep, JSON.stringify({ ...shipped, plan: 'nowhere.json' }));
  const plan = join(DEPLOY, 'k8s/base/plan.json');
  const sweep = join(DEPLOY, 'k8s/overlays/sweep/sweep.json');
  const image = ['--image', TEST_IMAGE];
  it.each([
    [
      'a loss budget of every agent',
      [...image, '--plan', plan, '--agents', '2', '--max-agent-loss', '2'],
      /--max-agent-loss 2 must be below --agents 2/,
    ],
    ['no image', ['--plan', plan], /--image REF is required/],
    ['a :latest image', ['--image', 'registry.example.com/loadfleet:latest', '--plan', plan], /not :latest/],
    ['two inputs', [...image, '--plan', plan, '--sweep', sweep], /exactly one of --plan/],
    ['policies without a target', [...image, '--plan', plan, '--network-policy'], /--network-policy needs the target/],
    [
      'a target namespace without a selector',
      [...image, '--plan', plan, '--target-namespace', 'llm'],
      /--target-namespace selects pods only/,
    ],
    ['a port without policies', [...image, '--plan', plan, '--target-port', '30000'], /add --target-selector or --target-cidr/],
    [
      "the coordinator in the agents' pool",
      [...image, '--plan', plan, '--node-selector', 'pool=lg', '--coordinator-node-selector', 'pool=lg'],
      /puts the coordinator into the agents' pool/,
    ],
    [
      'a deadline shorter than join + plan',
      [...image, '--plan', plan, '--deadline', '11m'],
      /shorter than the join timeout \(600 s\) plus the plan's duration and drain \(240 s\)/,
    ],
    ['a malformed toleration', [...image, '--plan', plan, '--tolerations', 'a:Sometimes'], /is not key\[=value\]/],
    ['a CIDR that is not one', [...image, '--plan', plan, '--target-cidr', '10.0.0.0/33'], /not an IPv4 CIDR/],
    ["a plan still aimed at 'change-me'", [...image, '--plan', changeMe], /still 'change-me'/],
    ['a sweep whose plan is missing', [...image, '--sweep', orphanSweep], /nowhere\.json/],
    ['an unknown flag', [...image, '--plan', plan, '--agent', '3'], /unknown argument '--agent'/],
    ['a bad run name', [...image, '--plan', plan, '--run', 'Bad_Name'], /run name 'Bad_Name' must be/],
    ['--fail-on-slo on a sweep', [...image, '--sweep', sweep, '--fail-on-slo'], /--fail-on-slo gates one plan's run/],
    ['a listen address that is neither', [...image, '--plan', plan, '--listen-host', '10.0.0.1'], /--listen-host '10\.0\.0\.1' must be ::/],
    ['a pull secret that is no name', [...image, '--plan', plan, '--image-pull-secret', 'Reg_Cred'], /--image-pull-secret 'Reg_Cred'/],
    [
      'a target selector whose port cannot be read (no --target-port, no cluster)',
      [...image, '--plan', plan, '--target-selector', 'app=vllm'],
      /--target-selector without --target-port: the policy must allow the server pods' port/,
    ],
  ])('refuses %s (exit 2, nothing rendered)', (_what, args, message) => {
    const out = wrapper(['render', ...(args as string[])]);
    expect(out.stderr).toMatch(message as RegExp);
    expect(out.status).toBe(2);
    expect(out.stdout).toBe('');
  });
});

describe("the wrapper's exit codes", () => {
  it("are the coordinator's (shared/errors.ts ExitCode), which the plain module mirrors", async () => {
    const { EXIT } = (await import('../deploy/k8s-run/outcome.mjs' as string)) as { EXIT: Record<string, number> };
    for (const [name, code] of Object.entries(EXIT)) expect(ExitCode[name as keyof typeof ExitCode], name).toBe(code);
  });
});
