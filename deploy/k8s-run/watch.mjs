// What the wrapper concludes from one look at a run (`kubectl get pods,jobs,events -o json`, and
// the last log lines of containers that failed). Pure, so it is tested on recorded answers. It ends
// the run, in the cluster's own words, when:
// - admission refused a Job's pods (FailedCreate on the Job: no pod exists, nothing is Pending);
// - a pod cannot start and nothing will change that: an image that is not there or not allowed, a
//   volume that does not exist, an autoscaler that will not add a node (NotTriggerScaleUp);
// - a pod made no progress for the start bound (progress: created, scheduled, a scale-up
//   triggered, a node nominated, an image pulled), coordinator or agent alike;
// - every agent failed, or the Job controller gave the agents up (the pod failure policy's exit 2:
//   token, certificate, arguments; more failed indexes than --max-agent-loss), so the coordinator
//   would only wait out its join timeout.
// An agent lost mid-run (evicted, its node gone) or replaced (a sweep's) is reported and the run goes
// on: the coordinator decides within --max-agent-loss. The coordinator Job's end is the run's end.
import { autoscaler, createRefused, hopelessKubelet, lastOf, lastProgress } from './events.mjs';

const INDEX = 'batch.kubernetes.io/job-completion-index';
/** Waiting reasons that no amount of waiting fixes. */
const HOPELESS = ['InvalidImageName'];
/** Waiting reasons of a container that cannot start. */
const STUCK = [
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
];
const MOUNT_EVENTS = ['FailedMount', 'FailedAttachVolume'];
/** The agents' Job failed in a way that ends the run (not FailedIndexes: that is a degraded run's end). */
const AGENTS_GIVEN_UP = ['PodFailurePolicy', 'MaxFailedIndexesExceeded', 'BackoffLimitExceeded'];

const roleOf = (pod) => pod.metadata?.labels?.['app.kubernetes.io/component'] ?? 'pod';
const indexOf = (pod) => pod.metadata?.annotations?.[INDEX];
const who = (pod) => (roleOf(pod) === 'agent' ? `agent ${indexOf(pod)} (${pod.metadata.name})` : `${roleOf(pod)} (${pod.metadata.name})`);
const condition = (obj, type) => (obj?.status?.conditions ?? []).find((c) => c.type === type && c.status === 'True');

/** Why a pod has not started: the scheduler's message, a container's waiting reason, or a mount event. */
export function whyPending(pod, events) {
  const sched = (pod.status?.conditions ?? []).find((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (sched) return `${sched.reason ?? 'Unschedulable'}: ${sched.message ?? ''}`.trim();
  const mount = lastOf(pod, events, MOUNT_EVENTS);
  const waiting = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
    .map((s) => s.state?.waiting)
    .find((w) => w && STUCK.includes(w.reason));
  if (waiting) return `${waiting.reason}: ${waiting.message ?? ''}`.trim();
  return mount;
}

/** Why a pod ended without success: a disruption, the kubelet's reason, or its container's exit. */
export function whyFailed(pod) {
  const disrupted = condition(pod, 'DisruptionTarget');
  if (disrupted) return `${disrupted.reason}${disrupted.message ? `: ${disrupted.message}` : ''}`;
  if (pod.status?.reason) return `${pod.status.reason}${pod.status.message ? `: ${pod.status.message}` : ''}`;
  const t = (pod.status?.containerStatuses ?? []).map((s) => s.state?.terminated).find(Boolean);
  if (t) return `exit ${t.exitCode}${t.reason ? ` (${t.reason})` : ''}`;
  return 'failed';
}

/** A container that ended with a non-zero exit: the pods whose last log lines are worth reading. */
export const failedContainer = (pod) =>
  (pod.status?.containerStatuses ?? []).some((s) => s.state?.terminated && s.state.terminated.exitCode !== 0);

/** whyFailed and, when read, the container's last log lines. */
function ended(pod, logs) {
  const tail = (logs?.[pod.metadata.name] ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-3);
  return `${whyFailed(pod)}${tail.length > 0 ? `; its last lines: ${tail.join(' | ')}` : ''}`;
}

/** After this long running without joining, an agent's last lines are read and said. */
export const JOIN_QUIET_S = 60;

const startedAt = (pod) => Date.parse(pod?.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? '') || undefined;

/**
 * Running agents the coordinator's log has not said joined (`seen.joined`: the indexes it did,
 * undefined when its log is not read), each with how long both have run: [{ pod, forS }].
 */
export function unjoined(seen, now) {
  if (!seen.joined || seen.joined.all) return [];
  const coordinator = (seen.pods ?? []).find((p) => roleOf(p) === 'coordinator' && p.status?.phase === 'Running');
  const since = startedAt(coordinator);
  if (since === undefined) return [];
  return (seen.pods ?? [])
    .filter((p) => roleOf(p) === 'agent' && p.status?.phase === 'Running' && !seen.joined.has(indexOf(p)) && startedAt(p))
    .map((pod) => ({ pod, forS: Math.round((now - Math.max(since, startedAt(pod))) / 1000) }));
}

const lastLines = (pod, logs) => {
  const tail = (logs?.[pod.metadata.name] ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-2);
  return tail.length > 0 ? `; its last lines: ${tail.join(' | ')}` : '';
};

/** The pending pod's fate: fail now, fail at the bound, or a line to print. */
function pending(pod, events, now, bounds) {
  const why = whyPending(pod, events);
  const waiting = (pod.status?.containerStatuses ?? []).map((s) => s.state?.waiting).filter(Boolean);
  // A claim that does not exist: the scheduler waits for it forever, and nothing of the run makes it.
  const noClaim = why && /persistentvolumeclaim "[^"]+" not found/.test(why) && why;
  const hopeless =
    (waiting.some((w) => HOPELESS.includes(w.reason)) && `${waiting[0].reason}: ${waiting[0].message ?? ''}`.trim()) ||
    noClaim ||
    hopelessKubelet(pod, events);
  const describe = `(kubectl describe pod ${pod.metadata.name})`;
  if (hopeless) return { fail: `${who(pod)} cannot start: ${hopeless} ${describe}` };
  const scale = autoscaler(pod, events);
  const unschedulable = (pod.status?.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (scale && !scale.scalingUp && unschedulable)
    return {
      fail: `${who(pod)} cannot be scheduled and the autoscaler will not add a node: ${scale.line}; the scheduler: ${why} ${describe}`,
    };
  const stuckS = Math.round((now - (lastProgress(pod, events) || now)) / 1000);
  if (stuckS >= bounds.startTimeoutS)
    return { fail: `${who(pod)} made no progress for ${stuckS} s: ${why ?? 'still Pending'} ${describe}` };
  const lines = [];
  if (why) lines.push(`${who(pod)} not started yet: ${why}`);
  // A scheduler's event says more than the pod's condition when it is another scheduler's (Karpenter's
  // "incompatible with nodepool …", a secondary scheduler's).
  const event = lastOf(pod, events, ['FailedScheduling']);
  if (event && why && !event.endsWith(why.replace(/^[^:]*: /, ''))) lines.push(`${who(pod)}: ${event}`);
  if (scale) lines.push(`${who(pod)}: ${scale.line}`);
  return { lines };
}

/**
 * One look at the run. `seen` is { pods, events, coordinatorJob, agentsJob, logs?, joined? } (logs:
 * pod name → its container's last lines; joined: the agent indexes the coordinator said joined); `now` in ms; `bounds` { startTimeoutS, maxAgentLoss, agents?, run? }.
 * Returns { outcome: 'running' | 'complete' | 'failed', reason?, lines } where lines are facts
 * worth printing (the caller prints each once).
 */
export function assess(seen, now, bounds) {
  const lines = [];
  const pods = seen.pods ?? [];
  const events = seen.events ?? [];
  const done = condition(seen.coordinatorJob, 'Complete') ?? condition(seen.coordinatorJob, 'SuccessCriteriaMet');
  if (done) return { outcome: 'complete', lines };
  const failed = condition(seen.coordinatorJob, 'Failed') ?? condition(seen.coordinatorJob, 'FailureTarget');
  if (failed) return { outcome: 'failed', reason: `the coordinator Job failed: ${failed.reason}: ${failed.message ?? ''}`.trim(), lines };
  const fail = (reason) => ({ outcome: 'failed', reason, lines });

  // Admission: the Job controller could not create the pods (no pod exists, so nothing is Pending).
  for (const [role, job, expected] of [
    ['coordinator', seen.coordinatorJob, 1],
    ['agent', seen.agentsJob, bounds.agents ?? 1],
  ]) {
    const name = job?.metadata?.name ?? (bounds.run && `loadfleet-${role === 'agent' ? 'agents' : 'coordinator'}-${bounds.run}`);
    const refused = name && createRefused(events, name, Date.parse(job?.metadata?.creationTimestamp ?? '') || 0);
    const live = pods.filter((p) => roleOf(p) === role && p.status?.phase !== 'Failed').length;
    if (refused && live < expected)
      return fail(
        `the ${role === 'agent' ? "agents'" : "coordinator's"} pods were refused (${live} of ${expected} exist): FailedCreate: ${refused}`,
      );
  }

  for (const pod of pods) {
    const phase = pod.status?.phase;
    if (phase === 'Pending') {
      const p = pending(pod, events, now, bounds);
      if (p.fail) return fail(p.fail);
      lines.push(...p.lines);
    } else if (phase === 'Failed') {
      lines.push(`${who(pod)} ended: ${ended(pod, seen.logs)}`);
    } else if (pod.metadata?.deletionTimestamp) {
      // A pod on a node that stopped answering stays Running and Terminating until the node is
      // back or removed; the coordinator has long counted its agent lost by then.
      const disrupted = condition(pod, 'DisruptionTarget');
      lines.push(`${who(pod)} is being removed from node ${pod.spec?.nodeName ?? '?'}${disrupted ? `: ${whyFailed(pod)}` : ''}`);
    }
  }

  // Agents: a replaced index (a sweep's agents are replaced, up to their per-index limit) and the
  // loss budget, as the Job controller counts it.
  const byIndex = new Map();
  for (const pod of pods.filter((p) => roleOf(p) === 'agent')) byIndex.set(indexOf(pod), [...(byIndex.get(indexOf(pod)) ?? []), pod]);
  for (const [index, list] of byIndex)
    if (list.length > 1) lines.push(`agent ${index} replaced: pod ${list.length} for this index (the same agent id rejoins)`);
  const failedIndexes = (seen.agentsJob?.status?.failedIndexes ?? '').split(',').filter(Boolean).length;
  if (failedIndexes > 0) lines.push(`agents lost for good: ${failedIndexes} of --max-agent-loss ${bounds.maxAgentLoss}`);

  // Every agent failed, or the Job controller gave them up: the coordinator would only wait.
  const dead = [...byIndex.values()].filter((list) => list.every((p) => p.status?.phase === 'Failed'));
  const agentsFailed = condition(seen.agentsJob, 'Failed') ?? condition(seen.agentsJob, 'FailureTarget');
  const words = () => {
    const reasons = [...new Set(dead.map((list) => ended(list.at(-1), seen.logs)))];
    return reasons.length > 0 ? `: ${reasons.slice(0, 3).join('; ')}` : '';
  };
  if (bounds.agents !== undefined && dead.length >= bounds.agents)
    return fail(`every agent failed (${dead.length} of ${bounds.agents})${words()}`);
  if (agentsFailed && AGENTS_GIVEN_UP.includes(agentsFailed.reason))
    return fail(`the agents' Job failed: ${agentsFailed.reason}: ${agentsFailed.message ?? ''}`.trim() + words());
  if (agentsFailed) lines.push(`the agents' Job ended: ${agentsFailed.reason}; waiting for the coordinator to write the run`);

  // Agents that run but have not joined (the coordinator's name does not resolve, a policy drops
  // the link: they retry quietly): said after a minute with their own last lines, and when none has
  // joined for the start bound, the run ends.
  const silent = unjoined(seen, now);
  for (const u of silent.filter((x) => x.forS >= JOIN_QUIET_S))
    lines.push(`${who(u.pod)} has not joined the coordinator after ${JOIN_QUIET_S} s${lastLines(u.pod, seen.logs)}`);
  const running = pods.filter((p) => roleOf(p) === 'agent' && p.status?.phase === 'Running');
  if (seen.joined && seen.joined.size === 0 && running.length > 0 && silent.length === running.length) {
    const forS = Math.min(...silent.map((u) => u.forS));
    if (forS >= bounds.startTimeoutS)
      return fail(`no agent joined the coordinator within ${forS} s of running${lastLines(silent[0].pod, seen.logs)}`);
  }

  const placed = pods.filter((p) => roleOf(p) === 'agent' && p.spec?.nodeName && p.status?.phase === 'Running');
  const nodes = new Map();
  for (const p of placed) nodes.set(p.spec.nodeName, [...(nodes.get(p.spec.nodeName) ?? []), indexOf(p)]);
  for (const [node, indexes] of nodes) if (indexes.length > 1) lines.push(`agents ${indexes.sort().join(', ')} share node ${node}`);
  return { outcome: 'running', lines };
}

/** Where each pod of the run ran: { pod, role, index, node } (placement.json beside the results). */
export function placement(pods) {
  return pods.map((p) => ({
    pod: p.metadata.name,
    role: roleOf(p),
    index: indexOf(p) === undefined ? null : Number(indexOf(p)),
    node: p.spec?.nodeName ?? null,
    phase: p.status?.phase ?? null,
  }));
}
