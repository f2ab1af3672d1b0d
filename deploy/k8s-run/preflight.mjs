// Before anything is applied: does the namespace exist, is the results volume there, may we
// create what a run is, is there room for N agents (one per node, each with --cpus free) and the
// coordinator off their pool, and does the namespace's quota allow it. Pure over the cluster's
// answers, so it is tested on recorded `kubectl get -o json`; gather() asks the questions.

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

/** What a run asks of the API (kubectl auth can-i VERB RESOURCE). */
export function permissions(o) {
  const create = ['jobs.batch', 'services', 'configmaps', 'secrets', 'poddisruptionbudgets.policy', 'pods'];
  if (o.networkPolicy) create.push('networkpolicies.networking.k8s.io');
  if (o.serviceMonitor) create.push('servicemonitors.monitoring.coreos.com');
  return [
    ...create.map((r) => ['create', r]),
    ['patch', 'services'],
    ['get', 'pods'],
    ['list', 'events'],
    ['get', 'pods/log'],
    ['create', 'pods/exec'],
    ['delete', 'jobs.batch'],
  ];
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
  if (!seen.pvc) errors.push('the results volume loadfleet-results is missing: kubectl apply -k deploy/k8s/results (once per namespace)');
  else if (seen.pvc.status?.phase === 'Lost') errors.push('the results volume loadfleet-results is Lost (its volume is gone)');
  for (const [verb, resource, allowed] of seen.canI ?? []) if (!allowed) errors.push(`not allowed to ${verb} ${resource} in the namespace`);

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
    errors.push(
      `${o.agents} agents need ${o.cpus} CPUs and ${o.memory} each; the ${poolText} have room for ${slots}: agents would stay Pending`,
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
    errors.push(`no node off the agents' pool has ${o.coordinatorCpus} CPUs and ${o.coordinatorMemory} free for the coordinator`);
  else if (Object.keys(o.nodeSelector).length === 0 && roomy.length < o.agents + 1)
    warnings.push(
      `${roomy.length} nodes with room for ${o.agents} agents and the coordinator: the coordinator will share a node with an agent (give --node-selector for a pool of its own)`,
    );

  const need = {
    'requests.cpu': o.agents * o.cpus + o.coordinatorCpus,
    'limits.cpu': o.agents * o.cpus + o.coordinatorCpus,
    'requests.memory': o.agents * memory + quantity(o.coordinatorMemory),
    'limits.memory': o.agents * memory + quantity(o.coordinatorMemory),
    pods: o.agents + 2,
    'count/jobs.batch': 2,
  };
  for (const q of seen.quotas ?? [])
    for (const [resource, amount] of Object.entries(need)) {
      const hard = q.status?.hard?.[resource] ?? q.spec?.hard?.[resource];
      if (hard === undefined) continue;
      const left = quantity(hard) - quantity(q.status?.used?.[resource]);
      if (left < amount) errors.push(`ResourceQuota ${q.metadata.name}: ${resource} has ${left} left, the run needs ${amount}`);
    }
  return { errors, warnings, notes };
}

/** Asks the cluster what preflight() needs. */
export function gather(k, o) {
  const items = (x) => x?.items ?? [];
  return {
    namespace: k.json(['get', 'namespace', o.namespace]),
    pvc: k.json(['get', 'pvc', 'loadfleet-results']),
    canI: permissions(o).map(([verb, resource]) => [verb, resource, k.run(['auth', 'can-i', verb, resource]).stdout.trim() === 'yes']),
    nodes: items(k.json(['get', 'nodes'])),
    pods: (() => {
      const all = k.json(['get', 'pods', '--all-namespaces', '--field-selector=status.phase!=Succeeded,status.phase!=Failed']);
      return all ? all.items : null;
    })(),
    quotas: items(k.json(['get', 'resourcequota'])),
  };
}
