// suite: contract
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
}
interface Verdict {
  outcome: 'running' | 'complete' | 'failed';
  reason?: string;
  lines: string[];
}
interface Watch {
  assess(seen: Seen, now: number, bounds: { startTimeoutS: number; maxAgentLoss: number }): Verdict;
  placement(pods: Obj[]): { pod: string; role: string; index: number | null; node: string | null }[];
}
interface Preflight {
  preflight(o: Obj, seen: Obj): { errors: string[]; warnings: string[]; notes: string[] };
  quantity(text: string): number;
}
interface Options {
  runOptions(raw: Obj): Obj;
}
// Plain ES modules without type declarations (the wrapper runs without a build): the shapes the
// tests rely on are stated above.
const MODULES = '../deploy/k8s-run/';
const { assess, placement } = (await import(`${MODULES}watch.mjs`)) as Watch;
const { preflight, quantity } = (await import(`${MODULES}preflight.mjs`)) as Preflight;
const { runOptions } = (await import(`${MODULES}options.mjs`)) as Options;

const fixture = (name: string): Obj => JSON.parse(readFileSync(new URL(`./fixtures/k8s/${name}.json`, import.meta.url), 'utf8')) as Obj;
const items = (name: string) => fixture(name)['items'] as Obj[];
const T0 = Date.parse('2026-12-04T10:00:00Z');
const bounds = { startTimeoutS: 300, maxAgentLoss: 1 };
const running = { coordinatorJob: fixture('job-coordinator-running'), agentsJob: fixture('job-agents-running') };

describe('a look at a running run', () => {
  it('an unschedulable agent is explained while within the bound and ends the run past it', () => {
    const seen = { ...running, pods: [fixture('pod-agent-running'), fixture('pod-agent-unschedulable')] };
    const early = assess(seen, T0 + 60_000, bounds);
    expect(early.outcome).toBe('running');
    expect(early.lines).toContain(
      "agent 15 (loadfleet-agents-r1-15-fghij) not started yet: Unschedulable: 0/17 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 16 Insufficient cpu. preemption: 0/17 nodes are available: 1 Preemption is not helpful for scheduling, 16 No preemption victims found for incoming pod.",
    );
    const late = assess(seen, T0 + 301_000, bounds);
    expect(late.outcome).toBe('failed');
    expect(late.reason).toMatch(
      /^agent 15 \(loadfleet-agents-r1-15-fghij\) cannot start after 301 s: Unschedulable: 0\/17 nodes .* 16 Insufficient cpu/,
    );
    expect(late.reason).toContain('kubectl describe pod loadfleet-agents-r1-15-fghij');
  });

  it('a coordinator without its results volume ends the run at the bound (not after the 2 h deadline)', () => {
    const v = assess({ ...running, pods: [fixture('pod-coordinator-pvc-missing')] }, T0 + 300_000, bounds);
    expect(v.outcome).toBe('failed');
    expect(v.reason).toMatch(
      /^coordinator \(loadfleet-coordinator-r1-klmno\) cannot start after 300 s: Unschedulable: .*persistentvolumeclaim "loadfleet-results" not found/,
    );
  });

  it('a coordinator whose image does not pull', () => {
    const v = assess({ ...running, pods: [fixture('pod-coordinator-image-pull')] }, T0 + 300_000, bounds);
    expect(v.reason).toMatch(
      /coordinator .* cannot start after 300 s: ImagePullBackOff: Back-off pulling image "registry.example.com\/loadfleet:0.1.0"/,
    );
  });

  it('an agent whose volume does not mount: the FailedMount event is the explanation', () => {
    const seen = { ...running, pods: [fixture('pod-agent-mount-pending')], events: [fixture('event-failed-mount')] };
    expect(assess(seen, T0 + 10_000, bounds).lines).toEqual([
      'agent 3 (loadfleet-agents-r1-3-uvwxy) not started yet: FailedMount: MountVolume.SetUp failed for volume "workload" : persistentvolumeclaim "traces" not found',
    ]);
    expect(assess(seen, T0 + 300_000, bounds).reason).toMatch(/agent 3 .* cannot start after 300 s: FailedMount: .*"traces" not found/);
    // The bound bites only for pods that are stuck: the same pod without the event, within it, is no news.
    expect(assess({ ...seen, events: [] }, T0 + 10_000, bounds)).toEqual({ outcome: 'running', lines: [] });
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
});
