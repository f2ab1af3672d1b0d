// suite: contract
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { describe, expect, it } from 'vitest';
import { agentLoss } from '../coordinator/run-status.js';
import { ExitCode } from '../shared/errors.js';
import {
  allContainers,
  baseName,
  COMPLETION_INDEX,
  commandOf,
  flag,
  HAS_KUBECTL,
  IMAGE_UID,
  jobs,
  jobTerminatesOthers,
  MODELS,
  ofKind,
  onlyOne,
  podSpecs,
  podTemplateLabels,
  RUN_LABEL,
  render,
  runKustomizations,
  selects,
  standing,
} from './deploy-k8s-model.js';
import { skipFor } from './require.js';

describe.skipIf(skipFor('the Kubernetes render tests', HAS_KUBECTL ? null : 'kubectl not found (install it, or set $KUBECTL)'))(
  'deploy/k8s',
  () => {
    it.each([...runKustomizations, ...standing])('%s renders and every object validates against the Kubernetes schemas', (dir) => {
      for (const obj of render(dir)) {
        const make = MODELS[`${obj.apiVersion} ${obj.kind}`];
        expect(make, `${obj.kind} ${obj.metadata.name}: no schema for ${obj.apiVersion} ${obj.kind}`).toBeDefined();
        expect(() => make!(obj).validate(), `${obj.kind} ${obj.metadata.name}`).not.toThrow();
      }
    });

    it.each([...runKustomizations, ...standing])(
      '%s: pinned images, requests and limits, secrets only from Secrets, non-root, no service-account token',
      (dir) => {
        const objects = render(dir);
        // Only the wrapper ships Secrets: the run's own token and TLS material, generated per run.
        expect(
          objects.filter((o) => o.kind === 'Secret').map((o) => baseName(o.metadata.name)),
          'no Secret in git: the wrapper generates the run token and TLS, operators the rest',
        ).toEqual(dir.startsWith('run:') ? ['loadfleet-tls', 'loadfleet-token'] : []);
        for (const c of allContainers(objects)) {
          expect(c.image, c.name).toMatch(/^[a-z0-9.-]+(:\d+)?\/[a-z0-9._/-]+(:[\w][\w.-]{0,127}|@sha256:[0-9a-f]{64})$/);
          expect(c.image, c.name).not.toMatch(/:latest$/);
          for (const kind of ['requests', 'limits'] as const)
            expect(Object.keys(c.resources?.[kind] ?? {}).sort(), `${c.name} ${kind}`).toEqual(['cpu', 'memory']);
          for (const e of c.env ?? []) {
            if (e.name === 'LOADFLEET_TOKEN') {
              expect(baseName(e.valueFrom?.secretKeyRef?.name), `${c.name}: LOADFLEET_TOKEN`).toBe('loadfleet-token');
              expect(e.valueFrom?.secretKeyRef?.key).toBe('token');
            }
            if (/TOKEN|SECRET|PASSWORD|API_KEY|ACCESS_KEY/i.test(e.name))
              expect(e.value, `${c.name}: ${e.name} must come from a Secret`).toBeUndefined();
          }
          expect(
            [...(c.command ?? []), ...(c.args ?? [])].filter((a) => a.startsWith('--token')),
            `${c.name}: no token in args`,
          ).toEqual([]);
        }
        for (const spec of podSpecs(objects)) {
          expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: IMAGE_UID });
          expect(spec.automountServiceAccountToken, 'no pod talks to the Kubernetes API').toBe(false);
        }
      },
    );

    it.each(runKustomizations)(
      '%s: an agent index that fails within --max-agent-loss fails neither the run nor the other agents',
      (dir) => {
        const objects = render(dir);
        const coordinator = onlyOne(jobs(objects, 'coordinator'), 'coordinator Jobs').spec!.template.spec!.containers[0]!;
        const maxLoss = Number(flag(coordinator, 'max-agent-loss'));
        expect(Number.isInteger(maxLoss), '--max-agent-loss is set').toBe(true);
        const fleet = commandOf(objects) !== 'start';
        const agentJobs = jobs(objects, 'agent');
        expect(agentJobs.length, 'an agents Job is rendered').toBeGreaterThan(0);
        for (const job of agentJobs) {
          const spec = job.spec!;
          expect(spec.maxFailedIndexes, 'maxFailedIndexes = --max-agent-loss').toBe(maxLoss);
          expect(spec.backoffLimit, 'no Job-wide backoff limit: failures count per index').toBeUndefined();
          for (let failed = 0; failed <= maxLoss; failed++) {
            expect(jobTerminatesOthers(spec, failed), `${failed} failed agents: the others keep running`).toBe(false);
            expect(agentLoss('a', 'test', failed, maxLoss, maxLoss).stop, `${failed} lost: the coordinator goes on`).toBe(false);
          }
          // Beyond the budget both sides give up together.
          expect(jobTerminatesOthers(spec, maxLoss + 1)).toBe(true);
          expect(agentLoss('a', 'test', maxLoss + 1, maxLoss, maxLoss).stop).toBe(true);
          // The model is not vacuous: the old `backoffLimit: 0` killed every agent at the first failure.
          expect(jobTerminatesOthers({ backoffLimit: 0 }, 1)).toBe(true);

          // No replacement while the old pod terminates (hands its spool over): no duplicate agent id.
          expect(spec.podReplacementPolicy).toBe('Failed');
          const pod = spec.template.spec!;
          // Never everywhere: backoffLimitPerIndex and podFailurePolicy take effect only with it
          // (with OnFailure restarts are unbounded and the kubelet's CrashLoopBackOff ends the run).
          expect(pod.restartPolicy).toBe('Never');
          const rules = spec.podFailurePolicy?.rules ?? [];
          expect(rules).toContainEqual({
            action: 'FailJob',
            onExitCodes: { containerName: 'agent', operator: 'In', values: [ExitCode.INVALID_INPUT] },
          });
          if (fleet) {
            // A fleet serves many runs: a failed agent pod is replaced for the same index (same id),
            // a bounded number of times, and an evicted one without using up a retry.
            expect(spec.backoffLimitPerIndex).toBeGreaterThan(0);
            expect(rules).toContainEqual({ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] });
          } else {
            expect(spec.backoffLimitPerIndex, 'a one-plan run never replaces an agent mid-run').toBe(0);
            expect(rules).toContainEqual({ action: 'FailIndex', onPodConditions: [{ type: 'DisruptionTarget' }] });
          }
          expect(spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
          expect(spec.activeDeadlineSeconds).toBeGreaterThan(Number(flag(coordinator, 'join-timeout-s')));
          expect(pod.terminationGracePeriodSeconds, 'time to hand the spool over on SIGTERM').toBeGreaterThanOrEqual(30);
        }
      },
    );

    it.each(runKustomizations)('%s: the coordinator Job: deadlines, TTL, retried only where it can resume', (dir) => {
      const objects = render(dir);
      const job = onlyOne(jobs(objects, 'coordinator'), 'coordinator Jobs');
      const spec = job.spec!;
      const coordinator = spec.template.spec!.containers[0]!;
      expect(spec.template.spec!.restartPolicy).toBe('Never');
      expect(spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
      expect(spec.activeDeadlineSeconds).toBeGreaterThan(Number(flag(coordinator, 'join-timeout-s')));
      if (commandOf(objects) === 'experiment') {
        expect(coordinator.args).toContain('--resume');
        expect(spec.backoffLimit).toBeGreaterThan(0);
        expect(spec.podFailurePolicy?.rules).toContainEqual({
          action: 'FailJob',
          onExitCodes: { containerName: 'coordinator', operator: 'In', values: [ExitCode.INVALID_INPUT] },
        });
        expect(spec.podFailurePolicy?.rules).toContainEqual({ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] });
      } else {
        expect(spec.backoffLimit, 'a second attempt would be a run no agent joins').toBe(0);
      }
    });

    it.each(runKustomizations)('%s: agents spread one per node without leaving a replacement Pending, off dead nodes in 30 s', (dir) => {
      for (const job of jobs(render(dir), 'agent')) {
        const pod = job.spec!.template.spec!;
        const labels = podTemplateLabels(job);
        expect(pod.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [], 'no required anti-affinity').toEqual(
          [],
        );
        const preferred = (pod.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map(
          (p) => p.podAffinityTerm,
        );
        const own = preferred.filter((t) => t.topologyKey === 'kubernetes.io/hostname' && selects(t.labelSelector, labels));
        expect(own.length).toBe(1);
        expect(own[0]!.matchLabelKeys, 'scoped to this run').toEqual([RUN_LABEL]);
        expect(own[0]!.labelSelector?.matchLabels?.[RUN_LABEL], 'a key in matchLabelKeys may not be in the selector').toBeUndefined();
        expect(
          preferred.some((t) => selects(t.labelSelector, { 'loadfleet.io/role': 'target' })),
          'away from the target',
        ).toBe(true);
        const spread = pod.topologySpreadConstraints?.find((t) => selects(t.labelSelector, labels));
        // ScheduleAnyway: DoNotSchedule counts nodes without free CPU too, and with exactly N pool
        // nodes would leave an agent Pending forever; nodes the pod may not use are not counted.
        expect(spread).toMatchObject({
          maxSkew: 1,
          topologyKey: 'kubernetes.io/hostname',
          whenUnsatisfiable: 'ScheduleAnyway',
          nodeAffinityPolicy: 'Honor',
          nodeTaintsPolicy: 'Honor',
          matchLabelKeys: [RUN_LABEL],
        });
        for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'])
          expect(pod.tolerations?.find((t) => t.key === key && t.effect === 'NoExecute')?.tolerationSeconds, key).toBeLessThanOrEqual(30);
        expect(job.spec!.template.metadata?.annotations).toMatchObject({
          'cluster-autoscaler.kubernetes.io/safe-to-evict': 'false',
          'karpenter.sh/do-not-disrupt': 'true',
        });
        const agent = pod.containers[0]!;
        const indexVar = agent.env?.find((e) => e.valueFrom?.fieldRef?.fieldPath === COMPLETION_INDEX)?.name;
        expect(indexVar, 'an env var holds the completion index').toBeDefined();
        expect(agent.args?.find((a) => a.startsWith('--id='))).toContain(`$(${indexVar})`);
        // The agent's main thread (link, TLS, merging) has a core of its own beside its workers.
        expect(Number(flag(agent, 'workers')), '--workers = the CPU limit - 1').toBe(Number(agent.resources?.limits?.['cpu']) - 1);
        expect(agent.env?.find((e) => e.name === 'LOADFLEET_NODE_NAME')?.valueFrom?.fieldRef?.fieldPath, 'the node, for run.json').toBe(
          'spec.nodeName',
        );
        expect(
          agent.env?.find((e) => e.name === 'LOADFLEET_CLOCK_DOMAIN')?.value,
          'LOADFLEET_CLOCK_DOMAIN is set (possibly empty)',
        ).toBeTypeOf('string');
      }
    });

    it.each(runKustomizations)(
      '%s: every pod of the run is Guaranteed with whole CPUs, and no voluntary disruption takes one while it runs',
      (dir) => {
        const objects = render(dir);
        const runJobs = [...jobs(objects, 'coordinator'), ...jobs(objects, 'agent')];
        for (const j of runJobs) {
          const c = j.spec!.template.spec!.containers[0]!;
          expect(c.resources?.requests, c.name).toEqual(c.resources?.limits);
          expect(Number.isInteger(Number(c.resources?.limits?.['cpu'])), `${c.name}: whole CPUs`).toBe(true);
        }
        const pdb = onlyOne(ofKind(objects, PodDisruptionBudget.is), 'disruption budgets');
        // An integer minAvailable covering every pod: the only form honoured for Job-owned pods.
        const pods = jobs(objects, 'agent').reduce((n, j) => n + (j.spec?.parallelism ?? 0), 1);
        expect(pdb.spec?.minAvailable).toBe(pods);
        expect(pdb.spec?.maxUnavailable).toBeUndefined();
        for (const j of runJobs) expect(selects(pdb.spec?.selector, podTemplateLabels(j)), j.metadata?.name).toBe(true);
      },
    );
  },
);
