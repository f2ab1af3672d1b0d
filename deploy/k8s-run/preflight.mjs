// Before anything is applied: does the namespace exist, is the results volume there (and a
// StorageClass to bind it), may we do everything a run does (SelfSubjectAccessReview through
// `kubectl auth can-i`), do the namespace's LimitRanges and quota admit the pods, and is there room
// for N agents and the coordinator off their pool. Where room cannot be known (nodes not listable
// by a tenant) or is made on demand (Karpenter, cluster-autoscaler from zero, GKE Autopilot or
// node auto-provisioning) a shortfall is a warning: the watch follows the autoscaler's events
// instead. Pure over the cluster's answers, so it is tested on recorded `kubectl get -o json`;
// gather() asks the questions.

const UNITS = {
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes quantity ("500m", "2", "1Gi", "1e3") as a number (cores or bytes). */
export function quantity(text) {
  const m = /^([+-]?[\d.]+(?:e[+-]?\d+)?)([a-zA-Z]*)$/.exec(String(text ?? '0'));
  if (!m) return 0;
  return Number(m[1]) * (m[2] ? (UNITS[m[2]] ?? Number.NaN) : 1);
}

/** The kinds a run creates, patches (owner references, the coordinator's suspension) and deletes. */
function kinds(o) {
  const list = ['jobs.batch', 'services', 'configmaps', 'secrets', 'poddisruptionbudgets.policy', 'pods'];
  if (o.networkPolicy) list.push('networkpolicies.networking.k8s.io');
  if (o.serviceMonitor) list.push('servicemonitors.monitoring.coreos.com');
  return list;
}

/** Every permission `run` uses (kubectl auth can-i VERB RESOURCE), in the order it uses them. */
export function permissions(o) {
  const all = kinds(o);
  return [
    ...all.map((r) => ['create', r]),
    ...all.map((r) => ['get', r]),
    ...all.map((r) => ['patch', r]),
    ['list', 'pods'],
    // kubectl wait --for=delete, when the coordinator is stopped.
    ['watch', 'pods'],
    ['list', 'events'],
    ['get', 'pods/log'],
    ['create', 'pods/exec'],
    ...all.map((r) => ['delete', r]),
  ];
}

/** The pods' containers as LimitRanges judge them: { what, requests, limits } (cores, bytes). */
function containers(o) {
  const g = (cpu, memory) => ({ cpu, memory: quantity(memory) });
  return [
    { what: 'an agent', requests: g(o.cpus, o.memory), limits: g(o.cpus, o.memory) },
    { what: 'the coordinator', requests: g(o.coordinatorCpus, o.coordinatorMemory), limits: g(o.coordinatorCpus, o.coordinatorMemory) },
    { what: 'the results reader', requests: { cpu: 0.05, memory: 64 * 2 ** 20 }, limits: { cpu: 0.5, memory: 256 * 2 ** 20 } },
  ];
}

/** What the namespace's LimitRanges refuse of the run's containers (one line each). */
export function limitRangeProblems(o, limitRanges) {
  const out = [];
  for (const lr of limitRanges ?? [])
    for (const l of lr.spec?.limits ?? []) {
      if (!['Container', 'Pod'].includes(l.type)) continue;
      for (const c of containers(o))
        for (const r of ['cpu', 'memory']) {
          const name = `LimitRange ${lr.metadata?.name} (${l.type})`;
          if (l.max?.[r] !== undefined && c.limits[r] > quantity(l.max[r]))
            out.push(`${name}: ${r} max ${l.max[r]}, ${c.what} has a limit of ${c.limits[r]}${r === 'memory' ? ' bytes' : ''}`);
          if (l.min?.[r] !== undefined && c.requests[r] < quantity(l.min[r]))
            out.push(`${name}: ${r} min ${l.min[r]}, ${c.what} requests ${c.requests[r]}${r === 'memory' ? ' bytes' : ''}`);
          const ratio = l.maxLimitRequestRatio?.[r];
          if (ratio !== undefined && c.limits[r] / c.requests[r] > quantity(ratio))
            out.push(`${name}: ${r} limit/request at most ${ratio}, ${c.what} has ${c.limits[r] / c.requests[r]}`);
        }
    }
  return [...new Set(out)];
}

const isDefault = (sc) =>
  sc.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true' ||
  sc.metadata?.annotations?.['storageclass.beta.kubernetes.io/is-default-class'] === 'true';

/** The results volume and the StorageClass it binds through: { errors, notes }. */
export function volumeProblems(pvc, storageClasses) {
  const errors = [];
  const notes = [];
  const known = storageClasses !== null && storageClasses !== undefined;
  const defaults = (storageClasses ?? []).filter(isDefault);
  if (!pvc) {
    const hint =
      known && defaults.length === 0 ? '; the cluster has no default StorageClass: set storageClassName in your overlay of it' : '';
    errors.push(`the results volume loadfleet-results is missing: kubectl apply -k deploy/k8s/results (once per namespace)${hint}`);
    return { errors, notes };
  }
  if (pvc.status?.phase === 'Lost') errors.push('the results volume loadfleet-results is Lost (its volume is gone)');
  if (pvc.status?.phase !== 'Pending' || !known) return { errors, notes };
  const className = pvc.spec?.storageClassName;
  const sc = className ? storageClasses.find((c) => c.metadata?.name === className) : defaults[0];
  if (className && !sc) errors.push(`the results volume is Pending: its StorageClass ${className} does not exist`);
  else if (!sc) errors.push('the results volume is Pending without a StorageClass, and the cluster has no default one');
  else if (sc.volumeBindingMode === 'WaitForFirstConsumer')
    notes.push(`the results volume binds when the coordinator starts (StorageClass ${sc.metadata.name}: WaitForFirstConsumer)`);
  return { errors, notes };
}

/**
 * Whether the agents' pool grows on demand, from what is visible: Karpenter NodePools whose
 * template can carry --node-selector's labels, the cluster-autoscaler's status ConfigMap, GKE node
 * auto-provisioning's pools (nap-…), or --autoscaled. Returns a description or undefined.
 */
export function autoscalerOf(o, seen) {
  if (o.autoscaled) return '--autoscaled';
  const fits = (pool) => {
    const labels = pool.spec?.template?.metadata?.labels ?? {};
    const reqs = pool.spec?.template?.spec?.requirements ?? [];
    return Object.entries(o.nodeSelector).every(
      ([k, v]) => labels[k] === v || reqs.some((r) => r.key === k && r.operator === 'In' && (r.values ?? []).includes(v)),
    );
  };
  const pools = (seen.karpenterPools ?? []).filter(fits).map((p) => p.metadata?.name);
  if (pools.length > 0) return `Karpenter NodePool ${pools.join(', ')}`;
  if (seen.clusterAutoscaler) return 'the cluster-autoscaler (kube-system/cluster-autoscaler-status)';
  if ((seen.nodes ?? []).some((n) => /^nap-/.test(n.metadata?.labels?.['cloud.google.com/gke-nodepool'] ?? '')))
    return 'GKE node auto-provisioning';
  return undefined;
}

const tolerates = (tolerations, taint) =>
  tolerations.some(
    (t) =>
      (t.operator === 'Exists' && (t.key === undefined || t.key === taint.key)) ||
      (t.key === taint.key && (t.operator === 'Exists' || t.value === taint.value) && (!t.effect || t.effect === taint.effect)),
  ) || taint.effect === 'PreferNoSchedule';

const ready = (node) => (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const matchesSelector = (node, selector) => Object.entries(selector).every(([k, v]) => node.metadata?.labels?.[k] === v);

/** Each schedulable node's free CPU and memory after the requests of the pods on it. */
export function freeByNode(nodes, pods) {
  const used = new Map();
  for (const p of pods ?? []) {
    if (!p.spec?.nodeName || ['Succeeded', 'Failed'].includes(p.status?.phase)) continue;
    const u = used.get(p.spec.nodeName) ?? { cpu: 0, memory: 0 };
    for (const c of p.spec.containers ?? []) {
      u.cpu += quantity(c.resources?.requests?.cpu);
      u.memory += quantity(c.resources?.requests?.memory);
    }
    used.set(p.spec.nodeName, u);
  }
  return nodes.map((n) => {
    const u = used.get(n.metadata.name) ?? { cpu: 0, memory: 0 };
    return {
      node: n,
      name: n.metadata.name,
      cpu: quantity(n.status?.allocatable?.cpu) - u.cpu,
      memory: quantity(n.status?.allocatable?.memory) - u.memory,
    };
  });
}

/**
 * The verdict: { errors, warnings, notes }. Errors stop the run before anything is applied.
 * `seen`: { namespace, pvc, canI: [[verb, resource, allowed]], nodes, pods (null: not allowed to
 * list), quotas }.
 */
export function preflight(o, seen) {
  const errors = [];
  const warnings = [];
  const notes = [];
  if (!seen.namespace) errors.push(`namespace ${o.namespace ?? '(the context default)'} does not exist or cannot be read`);
  const volume = volumeProblems(seen.pvc, seen.storageClasses);
  errors.push(...volume.errors);
  notes.push(...volume.notes);
  for (const [verb, resource, allowed] of seen.canI ?? []) if (!allowed) errors.push(`not allowed to ${verb} ${resource} in the namespace`);
  errors.push(...limitRangeProblems(o, seen.limitRanges));
  quotaProblems(o, seen.quotas, errors);
  if (seen.nodes === null || seen.nodes === undefined) {
    warnings.push(
      `cannot list nodes (not allowed here): room for ${o.agents} agents and the coordinator was not checked; the watch reports any pod the scheduler cannot place`,
    );
    return { errors, warnings, notes };
  }
  if (!o.roomCheck) {
    notes.push('room on the nodes not checked (--no-room-check)');
    return { errors, warnings, notes };
  }
  const scaler = autoscalerOf(o, seen);
  // A shortfall the autoscaler can make up is said, not refused.
  const short = (line) =>
    scaler ? warnings.push(`${line}; ${scaler} may add nodes: the watch follows its scale-up events`) : errors.push(line);

  const agentTolerations = [{ key: 'loadfleet.io/loadgen', operator: 'Exists', effect: 'NoSchedule' }, ...o.tolerations];
  const usable = (n, selector, tolerations) =>
    ready(n) && !n.spec?.unschedulable && matchesSelector(n, selector) && (n.spec?.taints ?? []).every((t) => tolerates(tolerations, t));
  const free = freeByNode(seen.nodes ?? [], seen.pods);
  const memory = quantity(o.memory);
  const pool = free.filter((f) => usable(f.node, o.nodeSelector, agentTolerations));
  const roomy = pool.filter((f) => f.cpu >= o.cpus && f.memory >= memory);
  const slots = pool.reduce((n, f) => n + Math.max(0, Math.min(Math.floor(f.cpu / o.cpus), Math.floor(f.memory / memory))), 0);
  const poolText =
    Object.keys(o.nodeSelector).length > 0
      ? `nodes with ${Object.entries(o.nodeSelector)
          .map(([k, v]) => `${k}=${v}`)
          .join(',')}`
      : 'schedulable nodes';
  if (seen.pods === null) warnings.push('cannot list pods in every namespace: free CPU not checked, only node count and allocatable');
  notes.push(`${pool.length} ${poolText}; ${roomy.length} with ${o.cpus} CPUs and ${o.memory} free for an agent`);
  if (slots < o.agents)
    short(
      `${o.agents} agents need ${o.cpus} CPUs and ${o.memory} each; the ${poolText} have room for ${slots}${scaler ? ' now' : ': agents would stay Pending'}`,
    );
  else if (roomy.length < o.agents)
    warnings.push(
      `only ${roomy.length} ${poolText} have room for an agent: ${o.agents} agents will share nodes (placement is printed and in placement.json)`,
    );

  const offPool = (n) =>
    Object.keys(o.nodeSelector).length === 0 || !Object.entries(o.nodeSelector).some(([k, v]) => n.metadata?.labels?.[k] === v);
  const coordinatorNodes = free.filter(
    (f) =>
      usable(f.node, o.coordinatorNodeSelector, o.coordinatorTolerations) &&
      offPool(f.node) &&
      f.cpu >= o.coordinatorCpus &&
      f.memory >= quantity(o.coordinatorMemory),
  );
  if (coordinatorNodes.length === 0)
    short(`no node off the agents' pool has ${o.coordinatorCpus} CPUs and ${o.coordinatorMemory} free for the coordinator`);
  else if (Object.keys(o.nodeSelector).length === 0 && roomy.length < o.agents + 1)
    warnings.push(
      `${roomy.length} nodes with room for ${o.agents} agents and the coordinator: the coordinator will share a node with an agent (give --node-selector for a pool of its own)`,
    );

  return { errors, warnings, notes };
}

/** What every ResourceQuota has left against what the run needs. */
function quotaProblems(o, quotas, errors) {
  const memory = quantity(o.memory);
  const need = {
    'requests.cpu': o.agents * o.cpus + o.coordinatorCpus,
    'limits.cpu': o.agents * o.cpus + o.coordinatorCpus,
    'requests.memory': o.agents * memory + quantity(o.coordinatorMemory),
    'limits.memory': o.agents * memory + quantity(o.coordinatorMemory),
    pods: o.agents + 2,
    'count/jobs.batch': 2,
  };
  for (const q of quotas ?? [])
    for (const [resource, amount] of Object.entries(need)) {
      const hard = q.status?.hard?.[resource] ?? q.spec?.hard?.[resource];
      if (hard === undefined) continue;
      const left = quantity(hard) - quantity(q.status?.used?.[resource]);
      if (left < amount) errors.push(`ResourceQuota ${q.metadata.name}: ${resource} has ${left} left, the run needs ${amount}`);
    }
}

async function inBatches(list, n, f) {
  const out = [];
  for (let i = 0; i < list.length; i += n) out.push(...(await Promise.all(list.slice(i, i + n).map(f))));
  return out;
}

/** Asks the cluster what preflight() needs (null: not allowed to read, which some checks then say). */
export async function gather(k, o) {
  const items = (x) => x?.items ?? [];
  const list = (args) => {
    const r = k.json(args);
    return r ? r.items : null;
  };
  return {
    namespace: k.json(['get', 'namespace', o.namespace]),
    pvc: k.json(['get', 'pvc', 'loadfleet-results']),
    storageClasses: list(['get', 'storageclasses']),
    // One SelfSubjectAccessReview per permission, eight at a time (each is a kubectl process).
    canI: await inBatches(permissions(o), 8, async ([verb, resource]) => [
      verb,
      resource,
      (await k.runAsync(['auth', 'can-i', verb, resource])).stdout.trim() === 'yes',
    ]),
    nodes: list(['get', 'nodes']),
    pods: list(['get', 'pods', '--all-namespaces', '--field-selector=status.phase!=Succeeded,status.phase!=Failed']),
    quotas: items(k.json(['get', 'resourcequota'])),
    limitRanges: items(k.json(['get', 'limitrange'])),
    karpenterPools: items(k.json(['get', 'nodepools.karpenter.sh'])),
    clusterAutoscaler: k.json(['get', 'configmap', 'cluster-autoscaler-status', '--namespace=kube-system']) !== undefined,
  };
}
