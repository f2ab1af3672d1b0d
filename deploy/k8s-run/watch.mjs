// What the wrapper concludes from one look at a run (`kubectl get pods,jobs,events -o json`).
// Pure, so it is tested on recorded answers: a pod that cannot start (unschedulable, a volume that
// does not mount, an image that does not pull, a missing Secret) ends the run once it has been
// stuck for the start bound, coordinator or agent alike, with the cluster's own explanation; an
// agent lost mid-run (evicted, its node gone) or replaced (a sweep's agents are) is reported and
// the run goes on, because the coordinator decides within --max-agent-loss; the coordinator Job's
// end is the run's end.

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

const roleOf = (pod) => pod.metadata?.labels?.['app.kubernetes.io/component'] ?? 'pod';
const indexOf = (pod) => pod.metadata?.annotations?.[INDEX];
const who = (pod) => (roleOf(pod) === 'agent' ? `agent ${indexOf(pod)} (${pod.metadata.name})` : `${roleOf(pod)} (${pod.metadata.name})`);
const condition = (obj, type) => (obj?.status?.conditions ?? []).find((c) => c.type === type && c.status === 'True');

/** Why a pod has not started: the scheduler's message, a container's waiting reason, or a mount event. */
export function whyPending(pod, events) {
  const sched = (pod.status?.conditions ?? []).find((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (sched) return `${sched.reason ?? 'Unschedulable'}: ${sched.message ?? ''}`.trim();
  const mount = events.filter((e) => e.involvedObject?.name === pod.metadata.name && MOUNT_EVENTS.includes(e.reason)).at(-1);
  const waiting = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
    .map((s) => s.state?.waiting)
    .find((w) => w && STUCK.includes(w.reason));
  if (waiting) return `${waiting.reason}: ${waiting.message ?? ''}`.trim();
  if (mount) return `${mount.reason}: ${mount.message ?? ''}`.trim();
  return undefined;
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

/**
 * One look at the run. `seen` is { pods, events, coordinatorJob, agentsJob }; `now` in ms.
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

  for (const pod of pods) {
    const phase = pod.status?.phase;
    if (phase === 'Pending') {
      const why = whyPending(pod, events);
      const since = Date.parse(pod.metadata?.creationTimestamp ?? '') || now;
      const ageS = Math.round((now - since) / 1000);
      const waiting = (pod.status?.containerStatuses ?? []).map((s) => s.state?.waiting?.reason);
      if (waiting.some((r) => HOPELESS.includes(r)) || (why && ageS >= bounds.startTimeoutS))
        return {
          outcome: 'failed',
          reason: `${who(pod)} cannot start after ${ageS} s: ${why ?? 'Pending'} (kubectl describe pod ${pod.metadata.name})`,
          lines,
        };
      if (!why && ageS >= bounds.startTimeoutS)
        return {
          outcome: 'failed',
          reason: `${who(pod)} is still Pending after ${ageS} s (kubectl describe pod ${pod.metadata.name})`,
          lines,
        };
      if (why) lines.push(`${who(pod)} not started yet: ${why}`);
    } else if (phase === 'Failed') {
      lines.push(`${who(pod)} ended: ${whyFailed(pod)}`);
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
  const agentsFailed = condition(seen.agentsJob, 'Failed') ?? condition(seen.agentsJob, 'FailureTarget');
  if (agentsFailed) lines.push(`the agents' Job ended: ${agentsFailed.reason}; waiting for the coordinator to write the run`);

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
