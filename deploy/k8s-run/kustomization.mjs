// The kustomization a run is: the base, the components its flags choose, and one strategic-merge
// patch per object carrying every number the flags set (agent count, loss budget, CPUs, deadline,
// placement, the target's address), so no field that must agree with another is written by hand.
// Pure: returns the kustomization as an object (JSON is YAML, so it is written as JSON).

export const RUN_LABEL = 'loadfleet.io/run';
/** The image name every manifest uses, which `images` rewrites to --image. */
const MANIFEST_IMAGE = 'ghcr.io/loadfleet/loadfleet';
/** The agents' tolerations in the base, kept when --tolerations adds more (a list patch replaces). */
const BASE_AGENT_TOLERATIONS = [
  { key: 'loadfleet.io/loadgen', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
];

/** registry/name:tag or registry/name@sha256:… → a kustomize `images` entry. */
export function imageEntry(ref) {
  const at = ref.indexOf('@');
  if (at > 0) return { name: MANIFEST_IMAGE, newName: ref.slice(0, at), digest: ref.slice(at + 1) };
  const colon = ref.lastIndexOf(':');
  if (colon > ref.lastIndexOf('/')) return { name: MANIFEST_IMAGE, newName: ref.slice(0, colon), newTag: ref.slice(colon + 1) };
  return { name: MANIFEST_IMAGE, newName: ref };
}

const smp = (kind, apiVersion, name, body) => ({
  target: { kind, name },
  patch: JSON.stringify({ apiVersion, kind, metadata: { name }, ...body }),
});

const guaranteed = (cpus, memory) => ({ requests: { cpu: String(cpus), memory }, limits: { cpu: String(cpus), memory } });

/** Pods in `namespace` (or the run's own) with these labels, as a NetworkPolicy peer. */
function selectorPeer(selector, namespace) {
  // matchExpressions: kustomize would add the run's label to a matchLabels here.
  const podSelector = { matchExpressions: Object.entries(selector).map(([key, v]) => ({ key, operator: 'In', values: [v] })) };
  if (namespace === undefined) return { podSelector };
  return {
    podSelector,
    namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [namespace] }] },
  };
}

/** The target rule: the server (by selector and/or CIDR) on its ports, then any extra CIDRs on 443. */
export function targetEgress(o, ports) {
  const to = [];
  if (Object.keys(o.targetSelector).length > 0) to.push(selectorPeer(o.targetSelector, o.targetNamespace));
  for (const cidr of o.targetCidr) to.push({ ipBlock: { cidr } });
  const rules = [{ to, ports: ports.map((port) => ({ port, protocol: 'TCP' })) }];
  if (o.egressCidr.length > 0)
    rules.push({ to: o.egressCidr.map((cidr) => ({ ipBlock: { cidr } })), ports: [{ port: 443, protocol: 'TCP' }] });
  return rules;
}

/**
 * The run's kustomization. `paths` are relative to the directory it is written to: base,
 * components; `inputs` is readInputs' result (its files are written beside it).
 */
export function runKustomization(o, inputs, paths) {
  const components = [];
  if (o.mode !== 'plan') components.push(`${paths.components}/${o.mode}`);
  if (o.networkPolicy) components.push(`${paths.components}/network-policy`);
  if (o.workloadClaim !== undefined) components.push(`${paths.components}/workload-volume`);
  if (o.serviceMonitor) components.push(`${paths.components}/service-monitor`);

  // Knobs both pods take: pulling the image from a private registry, a priority class (so the
  // run's pods are not the first preempted, or so an autoscaler's overprovisioning yields to them).
  const shared = {
    imagePullSecrets: o.imagePullSecrets.length > 0 ? o.imagePullSecrets.map((name) => ({ name })) : undefined,
    priorityClassName: o.priorityClass,
  };
  const agentSpec = {
    ...shared,
    nodeSelector: Object.keys(o.nodeSelector).length > 0 ? o.nodeSelector : undefined,
    tolerations: [...BASE_AGENT_TOLERATIONS, ...o.tolerations],
    containers: [
      {
        name: 'agent',
        resources: guaranteed(o.cpus, o.memory),
        env: [{ name: 'LOADFLEET_WORKERS', value: String(o.workers) }],
      },
    ],
  };
  // Off the agents' pool: not on a node that carries any of the agents' node labels.
  const offPool = Object.entries(o.nodeSelector).map(([key, v]) => ({ key, operator: 'NotIn', values: [v] }));
  const coordinatorSpec = {
    ...shared,
    // The coordinator's cloud identity (IRSA, EKS Pod Identity) for uploads: their webhooks project
    // a token of their own, so the API token stays unmounted.
    serviceAccountName: o.serviceAccount,
    nodeSelector: Object.keys(o.coordinatorNodeSelector).length > 0 ? o.coordinatorNodeSelector : undefined,
    tolerations: o.coordinatorTolerations.length > 0 ? o.coordinatorTolerations : undefined,
    affinity:
      offPool.length > 0
        ? { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: offPool }] } } }
        : undefined,
    containers: [
      {
        name: 'coordinator',
        resources: guaranteed(o.coordinatorCpus, o.coordinatorMemory),
        env: [
          { name: 'LOADFLEET_AGENTS', value: String(o.agents) },
          { name: 'LOADFLEET_MAX_AGENT_LOSS', value: String(o.maxAgentLoss) },
          { name: 'LOADFLEET_LISTEN_HOST', value: o.listenHost },
        ],
      },
    ],
  };
  const patches = [
    smp('Job', 'batch/v1', 'loadfleet-agents', {
      spec: {
        completions: o.agents,
        parallelism: o.agents,
        maxFailedIndexes: o.maxAgentLoss,
        activeDeadlineSeconds: o.deadlineS,
        template: { spec: agentSpec },
      },
    }),
    smp('Job', 'batch/v1', 'loadfleet-coordinator', { spec: { activeDeadlineSeconds: o.deadlineS, template: { spec: coordinatorSpec } } }),
    // Every pod of the run: N agents + the coordinator (an integer: Job pods have no scale subresource).
    smp('PodDisruptionBudget', 'policy/v1', 'loadfleet-run', { spec: { minAvailable: o.agents + 1 } }),
  ];
  if (o.networkPolicy) {
    // policyPorts (target-port.mjs) read the pods' ports behind the Service; else --target-port or the URL's.
    const ports = inputs.policyPorts ?? [
      ...new Set([...(o.targetPort.length > 0 ? o.targetPort : [inputs.targetPort]), ...(inputs.scrapePorts ?? [])]),
    ];
    patches.push(smp('NetworkPolicy', 'networking.k8s.io/v1', 'loadfleet-target', { spec: { egress: targetEgress(o, ports) } }));
  }
  if (o.workloadClaim !== undefined)
    for (const name of ['loadfleet-agents', 'loadfleet-coordinator'])
      patches.push(
        smp('Job', 'batch/v1', name, {
          spec: {
            template: { spec: { volumes: [{ name: 'workload', persistentVolumeClaim: { claimName: o.workloadClaim, readOnly: true } }] } },
          },
        }),
      );
  if (o.serviceMonitor)
    patches.push({
      target: { kind: 'ServiceMonitor' },
      patch: JSON.stringify([
        { op: 'add', path: '/spec/selector/matchLabels/loadfleet.io~1run', value: o.run },
        // kube-prometheus-stack's Prometheus selects ServiceMonitors by label (release: <its release>).
        ...Object.entries(o.serviceMonitorLabels ?? {}).map(([key, value]) => ({
          op: 'add',
          path: `/metadata/labels/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`,
          value,
        })),
      ]),
    });
  if (o.failOnSlo)
    patches.push({
      target: { kind: 'Job', name: 'loadfleet-coordinator' },
      patch: JSON.stringify([{ op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--fail-on-slo' }]),
    });

  return {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: [paths.base],
    components,
    nameSuffix: `-${o.run}`,
    labels: [{ pairs: { [RUN_LABEL]: o.run }, includeSelectors: true, includeTemplates: true }],
    configMapGenerator: [{ name: 'loadfleet-plan', behavior: 'replace', files: Object.keys(inputs.files).map((f) => `inputs/${f}`) }],
    secretGenerator: [
      { name: 'loadfleet-token', files: ['secrets/token'] },
      { name: 'loadfleet-tls', type: 'kubernetes.io/tls', files: ['secrets/tls.crt', 'secrets/tls.key', 'secrets/ca.crt'] },
    ],
    images: [imageEntry(o.image)],
    patches: JSON.parse(JSON.stringify(patches)),
    replacements: [
      // Agents dial the Service by its suffixed name, which the certificate names too.
      {
        source: { kind: 'Service', name: 'loadfleet-coordinator', fieldPath: 'metadata.name' },
        targets: [
          {
            select: { kind: 'Job', labelSelector: 'app.kubernetes.io/component=agent' },
            fieldPaths: ['spec.template.spec.containers.[name=agent].env.[name=LOADFLEET_COORDINATOR_HOST].value'],
          },
        ],
      },
    ],
  };
}
