// What the cluster's events say about a run, in the words of the component that wrote them: the
// Job controller's FailedCreate (admission refused the pods: Gatekeeper, Kyverno, a LimitRange, a
// quota, Pod Security), the scheduler's and the autoscalers' (FailedScheduling, TriggeredScaleUp,
// NotTriggerScaleUp, Karpenter's Nominated), the kubelet's (image pulls, mounts). Pure: over the
// items of `kubectl get events -o json`.

/** Events that mean a pod moved on (its start bound counts again from there). */
const PROGRESS = ['TriggeredScaleUp', 'Nominated', 'Scheduled', 'Pulling', 'Pulled', 'Created', 'Started', 'SuccessfulAttachVolume'];
/** A pull error no retry fixes: the image or tag is not there, or the registry refuses this node. */
const PULL_HOPELESS = /not found|manifest unknown|unauthorized|denied|forbidden|\b401\b|\b403\b|no such host|invalid reference/i;
/** A mount no wait fixes: what it names does not exist, or is attached elsewhere. */
const MOUNT_HOPELESS = /not found|Multi-Attach error/i;

/** When an event last happened (core/v1 Events from events.k8s.io carry eventTime and series instead of timestamps). */
export function eventAt(e) {
  const t = e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;
  return Date.parse(t ?? '') || 0;
}

const byTime = (a, b) => eventAt(a) - eventAt(b);
/** The events of one object (kind and name), oldest first. */
export const eventsOf = (events, kind, name) =>
  events.filter((e) => e.involvedObject?.kind === kind && e.involvedObject?.name === name).sort(byTime);

/**
 * The Job controller's last FailedCreate on this Job newer than its last SuccessfulCreate, or
 * undefined. `since` (ms): the Job's creation, so a deleted earlier run of the same name, whose
 * events outlive it for an hour, is not heard as this one's.
 */
export function createRefused(events, jobName, since = 0) {
  const own = eventsOf(events, 'Job', jobName).filter((e) => eventAt(e) >= since - 1000);
  const refused = own.filter((e) => e.reason === 'FailedCreate').at(-1);
  const created = own.filter((e) => e.reason === 'SuccessfulCreate').at(-1);
  if (!refused || (created && eventAt(created) > eventAt(refused))) return undefined;
  return refused.message ?? 'FailedCreate';
}

/** When a pod last made progress: its creation, or its last progress event. */
export function lastProgress(pod, events) {
  const created = Date.parse(pod.metadata?.creationTimestamp ?? '') || 0;
  const moved = eventsOf(events, 'Pod', pod.metadata?.name)
    .filter((e) => PROGRESS.includes(e.reason))
    .map(eventAt);
  return Math.max(created, ...moved);
}

/** The autoscaler's word on a pending pod: scaling up for it, or not, and why. */
export function autoscaler(pod, events) {
  const last = eventsOf(events, 'Pod', pod.metadata?.name)
    .filter((e) => ['TriggeredScaleUp', 'NotTriggerScaleUp', 'Nominated'].includes(e.reason))
    .at(-1);
  if (!last) return undefined;
  return { scalingUp: last.reason !== 'NotTriggerScaleUp', line: `${last.reason}: ${last.message ?? ''}`.trim() };
}

/**
 * A kubelet event that no wait fixes (an image that is not there or not allowed, a volume that does
 * not exist or is attached to another node): its line, or undefined.
 */
export function hopelessKubelet(pod, events) {
  const own = eventsOf(events, 'Pod', pod.metadata?.name);
  const pull = own.filter((e) => e.reason === 'Failed' && /pull/i.test(e.message ?? '') && PULL_HOPELESS.test(e.message ?? '')).at(-1);
  if (pull) return `image pull failed: ${pull.message}`;
  const mount = own.filter((e) => ['FailedMount', 'FailedAttachVolume'].includes(e.reason) && MOUNT_HOPELESS.test(e.message ?? '')).at(-1);
  if (mount) return `${mount.reason}: ${mount.message}`;
  return undefined;
}

/** The last message of a kind on a pod (FailedMount, FailedScheduling, …), or undefined. */
export function lastOf(pod, events, reasons) {
  const e = eventsOf(events, 'Pod', pod.metadata?.name)
    .filter((x) => reasons.includes(x.reason))
    .at(-1);
  return e ? `${e.reason}: ${e.message ?? ''}`.trim() : undefined;
}
