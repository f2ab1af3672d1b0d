// The wrapper's decisions on the cluster's answers (test/fixtures/k8s: objects in the shape of
// `kubectl get -o json`): what a look at a running run concludes (fail fast on a pod that cannot
// start, coordinator or agent; go on through a lost or replaced agent), and what the preflight
// refuses before anything is applied (no room for N agents, no node for the coordinator off the
// pool, a quota, a missing results volume, a missing permission).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

type Obj = Record<string, unknown>;
interface Seen {
  pods?: Obj[];
  events?: Obj[];
  coordinatorJob?: Obj;
  agentsJob?: Obj;
  logs?: Record<string, string>;
  joined?: Set<string> | undefined;
}
interface Verdict {
  outcome: 'running' | 'complete' | 'failed';
  reason?: string;
  lines: string[];
}
interface Watch {
  assess(seen: Seen, now: number, bounds: { startTimeoutS: number; maxAgentLoss: number; agents?: number; run?: string }): Verdict;
  placement(pods: Obj[]): { pod: string; role: string; index: number | null; node: string | null }[];
}
interface Preflight {
  preflight(o: Obj, seen: Obj): { errors: string[]; warnings: string[]; notes: string[] };
  permissions(o: Obj): [string, string][];
  quantity(text: string): number;
}
interface Options {
  runOptions(raw: Obj): Obj;
}
// Plain ES modules without type declarations (the wrapper runs without a build): the shapes the
// tests rely on are stated above.
const MODULES = '../deploy/k8s-run/';
const { assess, placement } = (await import(`${MODULES}watch.mjs`)) as Watch;
const { preflight, permissions, quantity } = (await import(`${MODULES}preflight.mjs`)) as Preflight;
const { runOptions } = (await import(`${MODULES}options.mjs`)) as Options;

const fixture = (name: string): Obj => JSON.parse(readFileSync(new URL(`./fixtures/k8s/${name}.json`, import.meta.url), 'utf8')) as Obj;
const items = (name: string) => fixture(name)['items'] as Obj[];
/** A recorded `kubectl get events -o json` answer (test/fixtures/k8s/events.json names each). */
const events = (name: string) => (fixture('events')[name] as Obj)['items'] as Obj[];
const T0 = Date.parse('2026-12-04T10:00:00Z');
const bounds = { startTimeoutS: 300, maxAgentLoss: 1 };
const running = { coordinatorJob: fixture('job-coordinator-running'), agentsJob: fixture('job-agents-running') };

describe('a look at a running run', () => {
  it('an unschedulable agent is explained while within the bound and ends the run once it made no progress for it', () => {
    const seen = { ...running, pods: [fixture('pod-agent-running'), fixture('pod-agent-unschedulable')] };
    const early = assess(seen, T0 + 60_000, bounds);
    expect(early.outcome).toBe('running');
    expect(early.lines).toContain(
      "agent 15 (loadfleet-agents-r1-15-fghij) not started yet: Unschedulable: 0/17 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 16 Insufficient cpu. preemption: 0/17 nodes are available: 1 Preemption is not helpful for scheduling, 16 No preemption victims found for incoming pod.",
    );
    const late = assess(seen, T0 + 301_000, bounds);
    expect(late.outcome).toBe('failed');
    expect(late.reason).toMatch(
      /^agent 15 \(loadfleet-agents-r1-15-fghij\) made no progress for 301 s: Unschedulable: 0\/17 nodes .* 16 Insufficient cpu/,
    );
    expect(late.reason).toContain('kubectl describe pod loadfleet-agents-r1-15-fghij');
  });

  it('a coordinator without its results volume ends the run at once (no wait fixes a claim that does not exist)', () => {
    const v = assess({ ...running, pods: [fixture('pod-coordinator-pvc-missing')] }, T0 + 5_000, bounds);
    expect(v.outcome).toBe('failed');
    expect(v.reason).toMatch(
      /^coordinator \(loadfleet-coordinator-r1-klmno\) cannot start: Unschedulable: .*persistentvolumeclaim "loadfleet-results" not found/,
    );
  });

  it('an image that is not there, or not allowed, ends the run at once in the kubelet’s words; a pull that may recover waits for the bound', () => {
    const pods = [fixture('pod-coordinator-image-pull')];
    const notFound = assess({ ...running, pods, events: events('image-not-found') }, T0 + 10_000, bounds);
    expect(notFound.reason).toMatch(
      /^coordinator \(loadfleet-coordinator-r1-pqrst\) cannot start: image pull failed: Failed to pull image "registry.example.com\/loadfleet:0.1.0": rpc error: code = NotFound .*: not found/,
    );
    expect(assess({ ...running, pods, events: events('image-unauthorized') }, T0 + 10_000, bounds).reason).toMatch(/401 Unauthorized/);
    const slow = { ...running, pods, events: events('image-slow') };
    expect(assess(slow, T0 + 10_000, bounds).outcome).toBe('running');
    expect(assess(slow, T0 + 300_000, bounds).reason).toMatch(
      /coordinator .* made no progress for 300 s: ImagePullBackOff: Back-off pulling image "registry.example.com\/loadfleet:0.1.0"/,
    );
  });

  it('an agent whose volume does not exist: the FailedMount event, at once; a volume attached to another run’s node too', () => {
    const seen = { ...running, pods: [fixture('pod-agent-mount-pending')], events: [fixture('event-failed-mount')] };
    expect(assess(seen, T0 + 10_000, bounds).reason).toBe(
      'agent 3 (loadfleet-agents-r1-3-uvwxy) cannot start: FailedMount: MountVolume.SetUp failed for volume "workload" : persistentvolumeclaim "traces" not found (kubectl describe pod loadfleet-agents-r1-3-uvwxy)',
    );
    const coordinator = { ...fixture('pod-coordinator-image-pull'), status: { phase: 'Pending' } };
    expect(assess({ ...running, pods: [coordinator], events: events('multi-attach') }, T0 + 10_000, bounds).reason).toMatch(
      /^coordinator .* cannot start: FailedAttachVolume: Multi-Attach error for volume "pvc-3f2a" Volume is already used by pod\(s\) loadfleet-coordinator-r0-zzzzz/,
    );
    // The bound bites only for pods that are stuck: the same pod without the event, within it, is no news.
    expect(assess({ ...seen, events: [] }, T0 + 10_000, bounds)).toEqual({ outcome: 'running', lines: [] });
  });

  it.each([
    ['Gatekeeper', 'gatekeeper', 'agents', /admission webhook "validation\.gatekeeper\.sh" denied the request: \[require-team-label\]/],
    [
      'Kyverno',
      'kyverno',
      'coordinator',
      /admission webhook "validate\.kyverno\.svc-fail" denied the request: .*restrict-image-registries/s,
    ],
    ['a LimitRange', 'limitrange', 'agents', /forbidden: maximum cpu usage per Container is 2, but limit is 4/],
    ['a ResourceQuota', 'quota', 'agents', /forbidden: exceeded quota: team-quota, requested: requests\.cpu=4/],
    ['Pod Security', 'podsecurity', 'agents', /forbidden: violates PodSecurity "restricted:latest"/],
  ])('admission refuses the pods (%s): FailedCreate on the Job, no pod, the run ends at once in its words', (_who, answer, role, words) => {
    // Nothing Pending: the agents' Job has no pods (or one, under the quota); the coordinator runs.
    const coordinator = {
      ...fixture('pod-agent-running'),
      metadata: { name: 'loadfleet-coordinator-r1-vwxyz', labels: { 'app.kubernetes.io/component': 'coordinator' } },
    };
    const pods =
      role === 'agents'
        ? answer === 'quota'
          ? [coordinator, fixture('pod-agent-running')]
          : [coordinator]
        : [fixture('pod-agent-running')];
    const v = assess({ ...running, pods, events: events(answer) }, T0 + 5_000, { ...bounds, agents: 16, run: 'r1' });
    expect(v.outcome).toBe('failed');
    const exist = role === 'agents' ? (answer === 'quota' ? '1 of 16' : '0 of 16') : '0 of 1';
    expect(v.reason).toContain(
      `the ${role === 'agents' ? "agents'" : "coordinator's"} pods were refused (${exist} exist): FailedCreate: Error creating: `,
    );
    expect(v.reason).toMatch(words);
  });

  it('a refusal of an earlier run of the same name (its events outlive it) is not this one’s', () => {
    const agentsJob = {
      ...fixture('job-agents-running'),
      metadata: { name: 'loadfleet-agents-r1', creationTimestamp: '2026-12-04T10:05:00Z' },
    };
    const v = assess({ ...running, agentsJob, pods: [], events: events('gatekeeper') }, T0 + 320_000, { ...bounds, agents: 16, run: 'r1' });
    expect(v.outcome).toBe('running');
  });

  it('a refusal the Job controller got past (created after a quota freed up) is not one', () => {
    const v = assess({ ...running, pods: [fixture('pod-agent-running')], events: events('quota-then-created') }, T0 + 40_000, {
      ...bounds,
      agents: 1,
      run: 'r1',
    });
    expect(v.outcome).toBe('running');
  });

  it.each([
    ['the cluster-autoscaler', 'scale-up', 'TriggeredScaleUp: pod triggered scale-up: [{eks-loadgen-4ec5e6b2 16->17 (max: 32)}]', 240],
    ['Karpenter', 'karpenter', 'Nominated: Pod should schedule on: nodeclaim/loadgen-8x2kq', 270],
  ])('%s adding a node is progress: the start bound counts from its event, not from the pod’s creation', (_who, answer, line, atS) => {
    const seen = { ...running, pods: [fixture('pod-agent-unschedulable')], events: events(answer) };
    const v = assess(seen, T0 + 301_000, bounds);
    expect(v.outcome).toBe('running');
    expect(v.lines).toContain(`agent 15 (loadfleet-agents-r1-15-fghij): ${line}`);
    expect(assess(seen, T0 + (atS + 299) * 1000, bounds).outcome).toBe('running');
    expect(assess(seen, T0 + (atS + 300) * 1000, bounds).reason).toMatch(/^agent 15 .* made no progress for 300 s: Unschedulable/);
  });

  it('an autoscaler that will not add a node: the run ends at once with its reason and the scheduler’s', () => {
    const v = assess({ ...running, pods: [fixture('pod-agent-unschedulable')], events: events('no-scale-up') }, T0 + 25_000, bounds);
    expect(v.reason).toMatch(
      /^agent 15 \(loadfleet-agents-r1-15-fghij\) cannot be scheduled and the autoscaler will not add a node: NotTriggerScaleUp: pod didn't trigger scale-up: 1 max node group size reached, .*; the scheduler: Unschedulable: 0\/17 nodes/,
    );
  });

  it('every agent failing at start (a wrong token) ends the run at once, with their last log lines', () => {
    const second = {
      ...fixture('pod-agent-exit-2'),
      metadata: {
        ...(fixture('pod-agent-exit-2')['metadata'] as Obj),
        name: 'loadfleet-agents-r1-1-bcdef',
        annotations: { 'batch.kubernetes.io/job-completion-index': '1' },
      },
    };
    const logs = {
      'loadfleet-agents-r1-0-abcde':
        '[agent] connecting to wss://loadfleet-coordinator-r1:7000\nerror LF_AUTH_REFUSED: the coordinator refused the token (HTTP 401)\n',
      'loadfleet-agents-r1-1-bcdef':
        '[agent] connecting to wss://loadfleet-coordinator-r1:7000\nerror LF_AUTH_REFUSED: the coordinator refused the token (HTTP 401)\n',
    };
    const seen = { ...running, pods: [fixture('pod-agent-exit-2'), second], logs };
    const v = assess(seen, T0 + 45_000, { ...bounds, agents: 2 });
    expect(v.reason).toBe(
      'every agent failed (2 of 2): exit 2 (Error); its last lines: [agent] connecting to wss://loadfleet-coordinator-r1:7000 | error LF_AUTH_REFUSED: the coordinator refused the token (HTTP 401)',
    );
    // With more agents than failed so far, the Job controller's verdict (exit 2 → FailJob) is the end.
    const failJob = assess({ ...seen, agentsJob: fixture('job-agents-pod-failure-policy') }, T0 + 45_000, { ...bounds, agents: 16 });
    expect(failJob.reason).toMatch(
      /^the agents' Job failed: PodFailurePolicy: Container agent for pod lf\/loadfleet-agents-r1-0-abcde failed with exit code 2 matching FailJob rule at index 0: exit 2 \(Error\); its last lines: .*LF_AUTH_REFUSED/,
    );
  });

  it('agents that run but never join (the coordinator’s name does not resolve): said after a minute with their lines, the run ended at the bound', () => {
    const coordinator = {
      ...fixture('pod-agent-running'),
      metadata: { name: 'loadfleet-coordinator-r1-vwxyz', labels: { 'app.kubernetes.io/component': 'coordinator' } },
    };
    const dns = '[agent] coordinator not reachable yet (getaddrinfo EAI_AGAIN loadfleet-coordinator-r1); retrying\n';
    const seen = {
      ...running,
      pods: [coordinator, fixture('pod-agent-running')],
      logs: { 'loadfleet-agents-r1-0-abcde': dns },
      joined: new Set<string>(),
    };
    const started = Date.parse('2026-12-04T10:00:20Z');
    expect(assess(seen, started + 30_000, bounds).lines).toEqual([]);
    expect(assess(seen, started + 61_000, bounds).lines).toEqual([
      'agent 0 (loadfleet-agents-r1-0-abcde) has not joined the coordinator after 60 s; its last lines: [agent] coordinator not reachable yet (getaddrinfo EAI_AGAIN loadfleet-coordinator-r1); retrying',
    ]);
    expect(assess(seen, started + 300_000, bounds).reason).toBe(
      'no agent joined the coordinator within 300 s of running; its last lines: [agent] coordinator not reachable yet (getaddrinfo EAI_AGAIN loadfleet-coordinator-r1); retrying',
    );
    // Once one agent joined, the others' silence is said, not fatal (the coordinator's join timeout decides).
    expect(assess({ ...seen, joined: new Set(['5']) }, started + 300_000, bounds).outcome).toBe('running');
    // A coordinator log never heard is no evidence of silence.
    expect(assess({ ...seen, joined: undefined }, started + 300_000, bounds).outcome).toBe('running');
  });

  it('an evicted agent and an agent on a lost node are reported and the run goes on (the coordinator decides within K)', () => {
    const seen = {
      coordinatorJob: fixture('job-coordinator-running'),
      agentsJob: fixture('job-agents-one-failed-index'),
      pods: [fixture('pod-agent-running'), fixture('pod-agent-evicted'), fixture('pod-agent-node-lost')],
    };
    const v = assess(seen, T0 + 400_000, bounds);
    expect(v.outcome).toBe('running');
    expect(v.lines).toEqual([
      'agent 2 (loadfleet-agents-r1-2-zabcd) ended: EvictionByEvictionAPI: Eviction API: evicting',
      'agent 5 (loadfleet-agents-r1-5-efghi) is being removed from node pool-a-6: DeletionByTaintManager: Taint manager: deleting due to NoExecute taint',
      'agents lost for good: 1 of --max-agent-loss 1',
    ]);
  });

  it("a sweep's replaced agent: the same index again, reported, not fatal", () => {
    const seen = { ...running, pods: [fixture('pod-agent-evicted'), fixture('pod-agent-replaced')] };
    const v = assess(seen, T0 + 400_000, bounds);
    expect(v.outcome).toBe('running');
    expect(v.lines).toContain('agent 2 replaced: pod 2 for this index (the same agent id rejoins)');
  });

  it("the coordinator Job's end is the run's end", () => {
    expect(assess({ coordinatorJob: fixture('job-coordinator-complete'), pods: [] }, T0, bounds).outcome).toBe('complete');
    const failed = assess({ coordinatorJob: fixture('job-coordinator-failed'), pods: [] }, T0, bounds);
    expect(failed).toMatchObject({
      outcome: 'failed',
      reason: 'the coordinator Job failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
    });
  });

  it('agents that share a node are said, and placement names every pod’s node', () => {
    const twin = { ...fixture('pod-agent-replaced'), spec: { ...(fixture('pod-agent-replaced')['spec'] as Obj), nodeName: 'pool-a-1' } };
    expect(assess({ ...running, pods: [fixture('pod-agent-running'), twin] }, T0, bounds).lines).toContain(
      'agents 0, 2 share node pool-a-1',
    );
    expect(placement([fixture('pod-agent-running')])).toEqual([
      { pod: 'loadfleet-agents-r1-0-abcde', role: 'agent', index: 0, node: 'pool-a-1', phase: 'Running' },
    ]);
  });
});

describe('preflight', () => {
  const options = (extra: Obj) =>
    runOptions({ plan: 'plan.json', image: 'registry.example.com/loadfleet:0.1.0', namespace: 'lf', run: 'r1', ...extra });
  const pool = { nodeSelector: ['loadfleet.io/pool=loadgen'], tolerations: ['loadfleet.io/loadgen=true:NoSchedule'] };
  const cluster = (extra: Obj = {}) => ({
    namespace: { metadata: { name: 'lf' } },
    pvc: { status: { phase: 'Bound' } },
    canI: [['create', 'jobs.batch', true]],
    nodes: items('nodes-16'),
    pods: items('pods-kube-system'),
    quotas: [],
    ...extra,
  });

  it('reads quantities as the API writes them', () => {
    expect([quantity('7910m'), quantity('2'), quantity('1Gi'), quantity('28409Mi'), quantity('1e3')]).toEqual([
      7.91,
      2,
      2 ** 30,
      28409 * 2 ** 20,
      1000,
    ]);
  });

  it('16 agents of 4 CPUs on 16 pool nodes of 8, the coordinator on the other node: go', () => {
    const v = preflight(options({ agents: '16', cpus: '4', ...pool }), cluster());
    expect(v).toEqual({
      errors: [],
      warnings: [],
      notes: ['16 nodes with loadfleet.io/pool=loadgen; 16 with 4 CPUs and 1Gi free for an agent'],
    });
  });

  it('17 agents on 16 nodes: refused before anything is applied, with the count', () => {
    expect(preflight(options({ agents: '17', cpus: '4', ...pool }), cluster()).errors).toEqual([
      '17 agents need 4 CPUs and 1Gi each; the nodes with loadfleet.io/pool=loadgen have room for 16: agents would stay Pending',
    ]);
  });

  it('room for 16 agents only by doubling up: a warning that they will share nodes', () => {
    const v = preflight(options({ agents: '16', cpus: '3', ...pool }), cluster({ nodes: items('nodes-16').slice(8) }));
    expect(v.errors).toEqual([]);
    expect(v.warnings).toEqual([
      'only 8 nodes with loadfleet.io/pool=loadgen have room for an agent: 16 agents will share nodes (placement is printed and in placement.json)',
    ]);
  });

  it('no node off the pool for the coordinator', () => {
    const v = preflight(options({ agents: '16', cpus: '4', ...pool }), cluster({ nodes: items('nodes-16').slice(0, 16) }));
    expect(v.errors).toEqual(["no node off the agents' pool has 2 CPUs and 2Gi free for the coordinator"]);
  });

  it("the namespace's quota, the results volume and a permission", () => {
    const v = preflight(
      options({ agents: '16', cpus: '4', ...pool }),
      cluster({ quotas: items('quota'), pvc: undefined, canI: [['create', 'networkpolicies.networking.k8s.io', false]] }),
    );
    expect(v.errors).toEqual([
      'the results volume loadfleet-results is missing: kubectl apply -k deploy/k8s/results (once per namespace)',
      'not allowed to create networkpolicies.networking.k8s.io in the namespace',
      'ResourceQuota team-quota: requests.cpu has 61.5 left, the run needs 66',
      'ResourceQuota team-quota: limits.cpu has 60 left, the run needs 66',
    ]);
  });

  it('a tenant who may not list nodes: room is a warning, not "room for 0"', () => {
    const v = preflight(options({ agents: '16', cpus: '4', ...pool }), cluster({ nodes: null, pods: null }));
    expect(v.errors).toEqual([]);
    expect(v.warnings).toEqual([
      'cannot list nodes (not allowed here): room for 16 agents and the coordinator was not checked; the watch reports any pod the scheduler cannot place',
    ]);
  });

  it('a pool that scales from zero (Karpenter, the cluster-autoscaler, GKE auto-provisioning): a shortfall is a warning', () => {
    const others = items('nodes-16').slice(16); // only the node off the pool: the pool has none yet
    const karpenter = [
      {
        metadata: { name: 'loadgen' },
        spec: { template: { metadata: { labels: { 'loadfleet.io/pool': 'loadgen' } }, spec: { requirements: [] } } },
      },
    ];
    const v = preflight(options({ agents: '16', cpus: '4', ...pool }), cluster({ nodes: others, karpenterPools: karpenter }));
    expect(v.errors).toEqual([]);
    expect(v.warnings).toEqual([
      '16 agents need 4 CPUs and 1Gi each; the nodes with loadfleet.io/pool=loadgen have room for 0 now; Karpenter NodePool loadgen may add nodes: the watch follows its scale-up events',
    ]);
    // A NodePool that cannot carry the pool's label does not make room for it.
    const elsewhere = [{ metadata: { name: 'gpu' }, spec: { template: { metadata: { labels: { pool: 'gpu' } } } } }];
    expect(
      preflight(options({ agents: '16', cpus: '4', ...pool }), cluster({ nodes: others, karpenterPools: elsewhere })).errors,
    ).toHaveLength(1);
    expect(
      preflight(options({ agents: '16', cpus: '4', ...pool }), cluster({ nodes: others, clusterAutoscaler: true })).warnings[0],
    ).toContain('the cluster-autoscaler (kube-system/cluster-autoscaler-status) may add nodes');
    expect(preflight(options({ agents: '16', cpus: '4', ...pool, autoscaled: true }), cluster({ nodes: others })).errors).toEqual([]);
    // --no-room-check skips only the room: the volume is still checked.
    const skipped = preflight(options({ agents: '16', cpus: '4', ...pool, noRoomCheck: true }), cluster({ nodes: others, pvc: undefined }));
    expect(skipped.errors).toEqual([
      'the results volume loadfleet-results is missing: kubectl apply -k deploy/k8s/results (once per namespace)',
    ]);
    expect(skipped.notes).toEqual(['room on the nodes not checked (--no-room-check)']);
  });

  it("the namespace's LimitRanges: a maximum below the agents' CPUs, a minimum above the reader's", () => {
    const limitRanges = [
      {
        metadata: { name: 'team-limits' },
        spec: {
          limits: [{ type: 'Container', max: { cpu: '2', memory: '4Gi' }, min: { cpu: '100m' }, maxLimitRequestRatio: { cpu: '4' } }],
        },
      },
    ];
    expect(preflight(options({ agents: '16', cpus: '4', ...pool }), cluster({ limitRanges })).errors).toEqual([
      'LimitRange team-limits (Container): cpu max 2, an agent has a limit of 4',
      'LimitRange team-limits (Container): cpu min 100m, the results reader requests 0.05',
      'LimitRange team-limits (Container): cpu limit/request at most 4, the results reader has 10',
    ]);
  });

  it('the results volume: Pending on a StorageClass that does not exist, or with no default class', () => {
    const pending = (storageClassName?: string) => ({ spec: { storageClassName }, status: { phase: 'Pending' } });
    const classes = [
      {
        metadata: { name: 'gp3', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
        volumeBindingMode: 'WaitForFirstConsumer',
      },
    ];
    const o = options({ agents: '16', cpus: '4', ...pool });
    expect(preflight(o, cluster({ pvc: pending('fast'), storageClasses: classes })).errors).toEqual([
      'the results volume is Pending: its StorageClass fast does not exist',
    ]);
    expect(preflight(o, cluster({ pvc: pending(), storageClasses: [] })).errors).toEqual([
      'the results volume is Pending without a StorageClass, and the cluster has no default one',
    ]);
    expect(preflight(o, cluster({ pvc: pending(), storageClasses: classes })).notes).toContain(
      'the results volume binds when the coordinator starts (StorageClass gp3: WaitForFirstConsumer)',
    );
    expect(preflight(o, cluster({ pvc: undefined, storageClasses: [] })).errors[0]).toMatch(
      /missing: .*; the cluster has no default StorageClass/,
    );
  });

  it('every permission run uses is asked, by verb', () => {
    const asked = permissions(options({ targetSelector: ['app=vllm'], targetPort: ['8000'], serviceMonitor: true }));
    for (const verb of ['create', 'get', 'patch', 'delete'])
      expect(asked.filter(([v, r]) => v === verb && !r.includes('/')).map(([, r]) => r)).toEqual([
        'jobs.batch',
        'services',
        'configmaps',
        'secrets',
        'poddisruptionbudgets.policy',
        'pods',
        'networkpolicies.networking.k8s.io',
        'servicemonitors.monitoring.coreos.com',
      ]);
    expect(asked).toEqual(
      expect.arrayContaining([
        ['list', 'pods'],
        ['list', 'events'],
        ['get', 'pods/log'],
        ['create', 'pods/exec'],
      ]),
    );
  });
});
