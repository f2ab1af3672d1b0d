// The command line of `loadfleet-k8s run|render`, parsed, defaulted and checked as a whole before
// anything is rendered or applied: a run that cannot work is refused here, not found out on the
// cluster. Pure: the plan, sweep and experiment files are read by inputs.mjs.

/** A command line that cannot make a run (exit 2). */
export class UsageError extends Error {}

const RUN_NAME = /^[a-z0-9]([a-z0-9-]{0,18}[a-z0-9])?$/;
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const IMAGE = /^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)+(:\w[\w.-]{0,127})?(@sha256:[0-9a-f]{64})?$/;
const MEMORY = /^\d+(Ki|Mi|Gi|Ti)$/;
const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
/** The coordinator waits this long for the agents (its --join-timeout-s in every mode). */
export const JOIN_TIMEOUT_S = 600;

/** flag → [option key, kind]; kinds: str, int, bool, list (repeatable or comma-separated). */
const FLAGS = {
  '--run': ['run', 'str'],
  '-n': ['namespace', 'str'],
  '--namespace': ['namespace', 'str'],
  '--agents': ['agents', 'int'],
  '--max-agent-loss': ['maxAgentLoss', 'int'],
  '--plan': ['plan', 'str'],
  '--sweep': ['sweep', 'str'],
  '--experiment': ['experiment', 'str'],
  '--image': ['image', 'str'],
  '--deadline': ['deadline', 'str'],
  '--cpus': ['cpus', 'int'],
  '--memory': ['memory', 'str'],
  '--coordinator-cpus': ['coordinatorCpus', 'int'],
  '--coordinator-memory': ['coordinatorMemory', 'str'],
  '--node-selector': ['nodeSelector', 'list'],
  '--tolerations': ['tolerations', 'list'],
  '--coordinator-node-selector': ['coordinatorNodeSelector', 'list'],
  '--coordinator-tolerations': ['coordinatorTolerations', 'list'],
  '--network-policy': ['networkPolicy', 'bool'],
  '--target-selector': ['targetSelector', 'list'],
  '--target-namespace': ['targetNamespace', 'str'],
  '--target-cidr': ['targetCidr', 'list'],
  '--target-port': ['targetPort', 'list'],
  '--egress-cidr': ['egressCidr', 'list'],
  '--workload-claim': ['workloadClaim', 'str'],
  '--service-monitor': ['serviceMonitor', 'bool'],
  '--start-timeout': ['startTimeout', 'str'],
  '--cleanup': ['cleanup', 'str'],
  '--out': ['out', 'str'],
  '--no-preflight': ['noPreflight', 'bool'],
  '--no-room-check': ['noRoomCheck', 'bool'],
  '--autoscaled': ['autoscaled', 'bool'],
  '--fail-on-slo': ['failOnSlo', 'bool'],
  '--service-account': ['serviceAccount', 'str'],
  '--image-pull-secret': ['imagePullSecret', 'list'],
  '--priority-class': ['priorityClass', 'str'],
  '--service-monitor-labels': ['serviceMonitorLabels', 'list'],
  '--listen-host': ['listenHost', 'str'],
};
/** A DNS-1123 subdomain: the names of service accounts, Secrets and priority classes. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** Splits argv into raw option values; unknown flags and missing values are usage errors. */
export function parseArgs(argv) {
  const raw = {};
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const spec = FLAGS[arg];
    if (!spec) throw new UsageError(`unknown argument '${argv[i]}' (loadfleet-k8s --help)`);
    const [key, kind] = spec;
    if (kind === 'bool') {
      raw[key] = true;
      continue;
    }
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
    }
    if (kind === 'list') raw[key] = [...(raw[key] ?? []), ...value.split(',').filter((v) => v !== '')];
    else raw[key] = value;
  }
  return raw;
}

/** "90", "90s", "45m", "2h", "1d" → seconds. */
export function durationS(text, what) {
  const m = /^(\d+)(s|m|h|d)?$/.exec(text);
  if (!m) throw new UsageError(`${what} '${text}' is not a duration (e.g. 900, 45m, 2h, 1d)`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2] ?? 's'];
}

function integer(text, what, min, max) {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(String(text)) || n < min || n > max)
    throw new UsageError(`${what} must be a whole number from ${min} to ${max}, not '${text}'`);
  return n;
}

/** "k=v" pairs → a label map (node or pod selector). */
function labels(pairs, what) {
  const out = {};
  for (const p of pairs ?? []) {
    const [k, v, extra] = p.split('=');
    if (extra !== undefined || v === undefined || !LABEL_KEY.test(k) || !LABEL_VALUE.test(v))
      throw new UsageError(`${what} '${p}' is not key=value with a valid label key and value`);
    out[k] = v;
  }
  return out;
}

/** "key[=value][:Effect]" → a toleration (Exists without a value, Equal with one). */
function tolerations(items, what) {
  return (items ?? []).map((t) => {
    const [kv, effect, extra] = t.split(':');
    const [key, value] = kv.split('=');
    if (extra !== undefined || !LABEL_KEY.test(key ?? '') || (effect !== undefined && !EFFECTS.includes(effect)))
      throw new UsageError(`${what} '${t}' is not key[=value][:${EFFECTS.join('|')}]`);
    return {
      key,
      operator: value === undefined ? 'Exists' : 'Equal',
      ...(value === undefined ? {} : { value }),
      ...(effect === undefined ? {} : { effect }),
    };
  });
}

function cidr(text, what) {
  const m = CIDR.exec(text);
  if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || Number(m[5]) > 32)
    throw new UsageError(`${what} '${text}' is not an IPv4 CIDR (a.b.c.d/n)`);
  return text;
}

function port(text, what) {
  return integer(text, what, 1, 65535);
}

/**
 * The checked options of a run. Everything that can be known without the cluster and without the
 * input files is checked here; inputs.mjs adds what the files say (the plan's duration and target).
 */
export function runOptions(raw) {
  const modes = ['plan', 'sweep', 'experiment'].filter((m) => raw[m] !== undefined);
  if (modes.length !== 1) throw new UsageError('give exactly one of --plan FILE, --sweep FILE, --experiment FILE');
  const mode = modes[0];
  const run = raw.run ?? `lf-${new Date().toISOString().replace(/\D/g, '').slice(4, 14)}`;
  if (!RUN_NAME.test(run)) throw new UsageError(`run name '${run}' must be 1-20 characters of a-z, 0-9 and '-' (not at either end)`);
  const image = raw.image ?? process.env.LOADFLEET_IMAGE;
  if (!image) throw new UsageError('--image REF is required: the image you built and pushed (deploy/bin/build-image --push REF)');
  if (!IMAGE.test(image) || image.endsWith(':latest'))
    throw new UsageError(`--image '${image}' must be registry/name:tag or registry/name@sha256:… (not :latest)`);
  const agents = integer(raw.agents ?? '2', '--agents', 1, 1000);
  const maxAgentLoss = integer(raw.maxAgentLoss ?? '0', '--max-agent-loss', 0, 1000);
  if (maxAgentLoss >= agents)
    throw new UsageError(
      `--max-agent-loss ${maxAgentLoss} must be below --agents ${agents}: a run that may lose every agent measures nothing`,
    );
  const cpus = integer(raw.cpus ?? '2', '--cpus', 2, 256);
  const coordinatorCpus = integer(raw.coordinatorCpus ?? '2', '--coordinator-cpus', 1, 256);
  for (const [flag, v] of [
    ['--memory', raw.memory],
    ['--coordinator-memory', raw.coordinatorMemory],
  ])
    if (v !== undefined && !MEMORY.test(v)) throw new UsageError(`${flag} '${v}' must be a whole quantity in Ki, Mi, Gi or Ti (e.g. 2Gi)`);
  const deadlineS = durationS(raw.deadline ?? (mode === 'plan' ? '2h' : '24h'), '--deadline');
  if (deadlineS <= JOIN_TIMEOUT_S)
    throw new UsageError(`--deadline ${deadlineS} s leaves no time after the agents' ${JOIN_TIMEOUT_S} s join timeout`);
  const cleanup = raw.cleanup ?? 'post';
  if (!['post', 'never'].includes(cleanup)) throw new UsageError(`--cleanup '${cleanup}' must be post or never`);

  const nodeSelector = labels(raw.nodeSelector, '--node-selector');
  const coordinatorNodeSelector = labels(raw.coordinatorNodeSelector, '--coordinator-node-selector');
  const shared = Object.entries(nodeSelector).filter(([k, v]) => coordinatorNodeSelector[k] === v);
  if (Object.keys(nodeSelector).length > 0 && shared.length === Object.keys(nodeSelector).length)
    throw new UsageError(
      `--coordinator-node-selector puts the coordinator into the agents' pool (${shared.map(([k, v]) => `${k}=${v}`).join(',')}): it would take a node an agent needs`,
    );

  const targetSelector = labels(raw.targetSelector, '--target-selector');
  const targetCidr = (raw.targetCidr ?? []).map((c) => cidr(c, '--target-cidr'));
  const egressCidr = (raw.egressCidr ?? []).map((c) => cidr(c, '--egress-cidr'));
  const targetPort = (raw.targetPort ?? []).map((p) => port(p, '--target-port'));
  const hasTarget = Object.keys(targetSelector).length > 0 || targetCidr.length > 0;
  const networkPolicy = raw.networkPolicy === true || hasTarget;
  if (networkPolicy && !hasTarget)
    throw new UsageError('--network-policy needs the target: --target-selector k=v [--target-namespace NS] and/or --target-cidr CIDR');
  if (raw.targetNamespace !== undefined && Object.keys(targetSelector).length === 0)
    throw new UsageError('--target-namespace selects pods only with --target-selector k=v');
  if (!networkPolicy && (targetPort.length > 0 || egressCidr.length > 0))
    throw new UsageError('--target-port and --egress-cidr shape the NetworkPolicies: add --target-selector or --target-cidr');

  if (raw.failOnSlo === true && mode !== 'plan')
    throw new UsageError(`--fail-on-slo gates one plan's run; a ${mode}'s verdicts are in its ${mode}.json`);
  for (const [flag, v] of [
    ['--service-account', raw.serviceAccount],
    ['--priority-class', raw.priorityClass],
    ...(raw.imagePullSecret ?? []).map((v) => ['--image-pull-secret', v]),
  ])
    if (v !== undefined && !OBJECT_NAME.test(v))
      throw new UsageError(`${flag} '${v}' is not an object name (lowercase a-z, 0-9, '-', '.')`);
  const listenHost = raw.listenHost ?? '::';
  if (!['::', '0.0.0.0'].includes(listenHost))
    throw new UsageError(
      `--listen-host '${listenHost}' must be :: (IPv6 and IPv4, the default) or 0.0.0.0 (IPv4 only, for kernels without IPv6)`,
    );
  const serviceMonitorLabels = labels(raw.serviceMonitorLabels, '--service-monitor-labels');

  return {
    command: raw.command,
    mode,
    input: raw[mode],
    run,
    namespace: raw.namespace,
    image,
    agents,
    maxAgentLoss,
    cpus,
    workers: cpus - 1,
    memory: raw.memory ?? '1Gi',
    coordinatorCpus,
    coordinatorMemory: raw.coordinatorMemory ?? '2Gi',
    deadlineS,
    startTimeoutS: durationS(raw.startTimeout ?? '300', '--start-timeout'),
    nodeSelector,
    tolerations: tolerations(raw.tolerations, '--tolerations'),
    coordinatorNodeSelector,
    coordinatorTolerations: tolerations(raw.coordinatorTolerations, '--coordinator-tolerations'),
    networkPolicy,
    targetSelector,
    targetNamespace: raw.targetNamespace,
    targetCidr,
    targetPort,
    egressCidr,
    workloadClaim: raw.workloadClaim,
    serviceMonitor: raw.serviceMonitor === true || Object.keys(serviceMonitorLabels).length > 0,
    serviceMonitorLabels,
    cleanup,
    out: raw.out ?? './runs',
    preflight: raw.noPreflight !== true,
    roomCheck: raw.noRoomCheck !== true,
    autoscaled: raw.autoscaled === true,
    failOnSlo: raw.failOnSlo === true,
    serviceAccount: raw.serviceAccount,
    imagePullSecrets: raw.imagePullSecret ?? [],
    priorityClass: raw.priorityClass,
    listenHost,
  };
}
