// suite: contract
// Which Kubernetes versions a run's objects work on. The schema validator here (kubernetes-models)
// knows one API version and accepts fields it does not know, and an older API server silently
// drops fields it does not serve, so the lifecycle would quietly not hold. This walks every
// rendered run for the fields that came late and says, per version, which of them it would lose:
// the documented minimum (docs/kubernetes.md, "What you need") is where that list is empty.
import { describe, expect, it } from 'vitest';
import { HAS_KUBECTL, type K8sObject, render, runKustomizations } from './deploy-k8s-model.js';
import { skipFor } from './require.js';

type Any = Record<string, any>;
/** A field, the first release in which it is served and on by default (beta or GA), and where to find it. */
const LATE_FIELDS: { field: string; since: number; used: (o: Any) => boolean }[] = [
  { field: 'Job podFailurePolicy', since: 26, used: (o) => o.kind === 'Job' && o.spec?.podFailurePolicy !== undefined },
  {
    field: 'Job backoffLimitPerIndex/maxFailedIndexes',
    since: 29,
    used: (o) => o.kind === 'Job' && o.spec?.backoffLimitPerIndex !== undefined,
  },
  { field: 'Job podReplacementPolicy', since: 29, used: (o) => o.kind === 'Job' && o.spec?.podReplacementPolicy !== undefined },
  {
    field: 'podFailurePolicy action FailIndex',
    since: 29,
    used: (o) => (o.spec?.podFailurePolicy?.rules ?? []).some((r: Any) => r.action === 'FailIndex'),
  },
  {
    field: 'topologySpreadConstraints nodeAffinityPolicy/nodeTaintsPolicy',
    since: 26,
    used: (o) => (o.spec?.template?.spec?.topologySpreadConstraints ?? []).some((t: Any) => t.nodeAffinityPolicy || t.nodeTaintsPolicy),
  },
  {
    field: 'topologySpreadConstraints matchLabelKeys',
    since: 27,
    used: (o) => (o.spec?.template?.spec?.topologySpreadConstraints ?? []).some((t: Any) => t.matchLabelKeys),
  },
  {
    field: 'podAntiAffinity matchLabelKeys',
    since: 31,
    used: (o) =>
      (o.spec?.template?.spec?.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).some(
        (p: Any) => p.podAffinityTerm?.matchLabelKeys,
      ),
  },
  {
    field: 'PDB unhealthyPodEvictionPolicy',
    since: 27,
    used: (o) => o.kind === 'PodDisruptionBudget' && o.spec?.unhealthyPodEvictionPolicy,
  },
];
/** The oldest minor version the documentation promises. */
const DOCUMENTED_MINIMUM = 31;

const lost = (objects: K8sObject[], minor: number) =>
  LATE_FIELDS.filter((f) => f.since > minor && objects.some((o) => f.used(o as Any))).map((f) => f.field);

describe.skipIf(skipFor('the version tests', HAS_KUBECTL ? null : 'kubectl not found'))('Kubernetes versions', () => {
  it.each(runKustomizations)('%s: nothing lost from 1.31 on; what 1.26 to 1.30 would drop is known', (dir) => {
    const objects = render(dir);
    for (const minor of [31, 32, 33, 34]) expect(lost(objects, minor), `1.${minor}`).toEqual([]);
    expect(lost(objects, DOCUMENTED_MINIMUM - 1)).toEqual(['podAntiAffinity matchLabelKeys']);
    expect(lost(objects, 28)).toEqual(
      expect.arrayContaining(['Job backoffLimitPerIndex/maxFailedIndexes', 'Job podReplacementPolicy', 'podAntiAffinity matchLabelKeys']),
    );
    // The walk finds the fields at all (a renamed field would make every list empty).
    expect(lost(objects, 25).length).toBeGreaterThanOrEqual(6);
  });
});
