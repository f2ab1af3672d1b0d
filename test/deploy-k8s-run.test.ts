// `loadfleet-k8s run` against a scripted cluster: there is no API server here, so a stand-in
// kubectl (test/fixtures/k8s/fake-kubectl.mjs) answers from a script of steps built from the
// fixtures (objects in the shape of `kubectl get -o json`), and renders with the real kubectl.
// What the wrapper prints and does is real: its preflight, apply, owner references, following,
// fail-fast on stuck pods, going on through lost and replaced agents, fetching with retries and
// the placement, and cleaning up.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DEPLOY, HAS_KUBECTL, KUBECTL, TEST_IMAGE } from './deploy-k8s-model.js';
import { tempDir } from './harness.js';
import { skipFor } from './require.js';

type Obj = Record<string, unknown>;
const FIXTURES = fileURLToPath(new URL('./fixtures/k8s/', import.meta.url));
const fixture = (name: string): Obj => JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as Obj;
const items = (name: string) => fixture(name)['items'] as Obj[];
/** A fixture pod created `ageS` seconds ago (the wrapper measures stuck time on the real clock). */
const fresh = (name: string, ageS = 0): Obj => {
  const pod = fixture(name);
  (pod['metadata'] as Obj)['creationTimestamp'] = new Date(Date.now() - ageS * 1000).toISOString();
  return pod;
};
const SWEEP = ['--sweep', join(DEPLOY, 'k8s/overlays/sweep/sweep.json')];
const POOL = ['--node-selector', 'loadfleet.io/pool=loadgen', '--tolerations', 'loadfleet.io/loadgen=true:NoSchedule'];
const RESULTS = {
  '20261204T100000Z-cluster-capacity/sweep.json': '{"schema":"loadfleet.sweep-result/v1"}\n',
  'stage-1/run.json': '{"status":"completed"}\n',
};

interface Script {
  preflight?: Obj;
  podLogs?: Record<string, string>;
  leftovers?: string[];
  services?: Record<string, Obj>;
  endpointslices?: Obj[];
  steps: Obj[];
  logs?: string[];
  results?: Record<string, string>;
  cpFailures?: number;
}

async function runWrapper(script: Script, flags: string[], command = 'run') {
  const dir = tempDir('loadfleet-k8s-run-');
  writeFileSync(join(dir, 'script.json'), JSON.stringify(script));
  const kubectl = join(dir, 'kubectl');
  writeFileSync(kubectl, `#!/bin/sh\nexec node ${join(FIXTURES, 'fake-kubectl.mjs')} "$@"\n`, { mode: 0o755 });
  const started = Date.now();
  const args = [
    command,
    '--image',
    TEST_IMAGE,
    '--run',
    'r1',
    '-n',
    'lf',
    ...(command === 'run' ? ['--out', join(dir, 'runs')] : []),
    ...flags,
  ];
  const res = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(join(DEPLOY, 'bin/loadfleet-k8s'), args, {
      env: { ...process.env, KUBECTL: kubectl, REAL_KUBECTL: KUBECTL, FAKE_STATE: dir, LOADFLEET_K8S_POLL_S: '0.2' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
  const calls = existsSync(join(dir, 'calls')) ? readFileSync(join(dir, 'calls'), 'utf8').trim().split('\n') : [];
  return { ...res, ms: Date.now() - started, calls, dir };
}

const cluster = {
  namespace: { metadata: { name: 'lf' } },
  pvc: { status: { phase: 'Bound' } },
  nodes: items('nodes-16'),
  pods: items('pods-kube-system'),
};
const running = { coordinatorJob: fixture('job-coordinator-running'), agentsJob: fixture('job-agents-running') };
/** The coordinator's pod once its container ended with `code`. */
const coordinatorEnded = (code: number) => {
  const pod = coordinatorRunning();
  pod['status'] = {
    phase: code === 0 ? 'Succeeded' : 'Failed',
    containerStatuses: [{ name: 'coordinator', state: { terminated: { exitCode: code } } }],
  };
  return pod;
};
const events = (name: string) => (fixture('events')[name] as Obj)['items'] as Obj[];
const coordinatorRunning = () => {
  const pod = fresh('pod-agent-running');
  const meta = pod['metadata'] as { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  meta.name = 'loadfleet-coordinator-r1-vwxyz';
  meta.labels['app.kubernetes.io/component'] = 'coordinator';
  meta.annotations = {};
  (pod['spec'] as Obj)['nodeName'] = 'other-1';
  return pod;
};

describe.skipIf(skipFor('the wrapper run tests', HAS_KUBECTL ? null : 'kubectl not found'))('loadfleet-k8s run (scripted cluster)', () => {
  it('a 16-agent sweep: preflight, apply, owner references, the live view, an evicted agent replaced, results fetched with a retry, cleaned up', async () => {
    const t = await runWrapper(
      {
        preflight: cluster,
        steps: [
          { ...running, pods: [fresh('pod-agent-mount-pending')] },
          { ...running, pods: [coordinatorRunning(), fresh('pod-agent-running')] },
          {
            ...running,
            pods: [coordinatorRunning(), fresh('pod-agent-running'), fixture('pod-agent-evicted'), fresh('pod-agent-replaced')],
          },
          {
            coordinatorJob: fixture('job-coordinator-complete'),
            pods: [coordinatorRunning(), fresh('pod-agent-running'), fresh('pod-agent-replaced')],
          },
        ],
        logs: ['[coordinator] 16/16 agents joined', '[coordinator] stage 1: rate 16/s passed'],
        results: RESULTS,
        cpFailures: 1,
      },
      [...SWEEP, '--agents', '16', '--max-agent-loss', '1', '--cpus', '4', ...POOL],
    );
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toContain('preflight: 16 nodes with loadfleet.io/pool=loadgen; 16 with 4 CPUs and 1Gi free for an agent');
    expect(t.stdout).toContain('run r1 started in namespace lf: 16 agents (may lose 1), sweep, deadline 86400 s');
    expect(t.stdout).toContain('coordinator | [coordinator] 16/16 agents joined');
    expect(t.stderr).toContain('run r1: agent 2 (loadfleet-agents-r1-2-zabcd) ended: EvictionByEvictionAPI: Eviction API: evicting');
    expect(t.stderr).toContain('run r1: agent 2 replaced: pod 2 for this index (the same agent id rejoins)');
    expect(t.stdout).toContain('run r1: the coordinator Job completed');
    expect(t.stdout).toContain('run r1: stage-1/run.json: completed');
    // Each fact once, however many looks saw it.
    expect(t.stderr.split('agent 2 replaced').length).toBe(2);
    // The copy that stopped short was retried and checked file by file against the volume.
    expect(t.stderr).toContain('run r1: fetch attempt 1: 2 file(s) incomplete (error: unexpected EOF)');
    expect(t.stdout).toMatch(/results: .*runs\/r1 \(2 files, \d+ bytes, placement\.json\)/);
    for (const [f, text] of Object.entries(RESULTS)) expect(readFileSync(join(t.dir, 'runs/r1', f), 'utf8')).toBe(text);
    const placement = JSON.parse(readFileSync(join(t.dir, 'runs/r1/placement.json'), 'utf8')) as { pods: { role: string; node: string }[] };
    expect(placement.pods.map((p) => `${p.role}@${p.node}`)).toEqual(['coordinator@other-1', 'agent@pool-a-1', 'agent@pool-a-9']);
    // Everything but the coordinator Job is owned by it, so its TTL takes the run along.
    const applied = t.calls.filter((c) => c.startsWith('--namespace=lf apply -k'));
    expect(applied).toHaveLength(1);
    const patched = t.calls.filter((c) => c.startsWith('--namespace=lf patch '));
    expect(patched.map((c) => c.split(' ')[2]!.replace(/-[a-z0-9]{10}$/, '')).sort()).toEqual([
      'configmap/loadfleet-plan-r1',
      'job.batch/loadfleet-agents-r1',
      'poddisruptionbudget.policy/loadfleet-run-r1',
      'secret/loadfleet-tls-r1',
      'secret/loadfleet-token-r1',
      'service/loadfleet-coordinator-r1',
    ]);
    for (const c of patched) expect(c).toContain('"uid":"6b1c1d2e-0000-4000-8000-000000000001"');
    // A reader pod of the run's own, deleted after; then the run's objects, by label.
    expect(existsSync(join(t.dir, 'applied-reader-0.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(t.dir, 'applied-reader-0.json'), 'utf8')).metadata.name).toBe('loadfleet-results-reader-r1');
    expect(t.calls).toContain('--namespace=lf delete pod loadfleet-results-reader-r1 --wait=false --ignore-not-found');
    // Deleted, waited for, and checked: nothing of the run is left.
    expect(t.calls.at(-2)).toMatch(
      /^--namespace=lf delete jobs\.batch,services,.*,secrets,pods -l loadfleet\.io\/run=r1 --ignore-not-found --wait=true --timeout=120s$/,
    );
    expect(t.calls.at(-1)).toMatch(/^--namespace=lf get jobs\.batch,.*,pods -l loadfleet\.io\/run=r1 -o name$/);
    expect(t.stdout).toContain('run r1: its objects are deleted and none is left (--cleanup post)');
  });

  it('a coordinator that cannot schedule (no results volume) ends the run at once, frees the agents, leaves nothing', async () => {
    const t = await runWrapper({ steps: [{ ...running, pods: [fresh('pod-coordinator-pvc-missing'), fresh('pod-agent-running')] }] }, [
      ...SWEEP,
      '--no-preflight',
    ]);
    expect(t.code).toBe(1);
    expect(t.stderr).toMatch(
      /run r1 failed: coordinator \(loadfleet-coordinator-r1-klmno\) cannot start: Unschedulable: .*"loadfleet-results" not found/,
    );
    expect(t.ms, 'at once, not after the start bound or the 24 h deadline').toBeLessThan(60_000);
    expect(t.calls).toContain('--namespace=lf delete job loadfleet-agents-r1 --ignore-not-found --wait=false');
    expect(t.calls.some((c) => c.includes(' cp '))).toBe(false);
    expect(t.calls.at(-2)).toMatch(/ delete jobs\.batch,.* -l loadfleet\.io\/run=r1 /);
  });

  it('an agent whose volume does not exist: the FailedMount message, at once; the coordinator stopped and waited for before the fetch', async () => {
    const t = await runWrapper(
      {
        steps: [{ ...running, pods: [coordinatorRunning(), fresh('pod-agent-mount-pending')], events: [fixture('event-failed-mount')] }],
        results: RESULTS,
      },
      ['--plan', join(DEPLOY, 'k8s/base/plan.json'), '--start-timeout', '1', '--no-preflight'],
    );
    expect(t.code).toBe(1);
    expect(t.stderr).toMatch(
      /run r1 failed: agent 3 \(loadfleet-agents-r1-3-uvwxy\) cannot start: FailedMount: .*persistentvolumeclaim "traces" not found/,
    );
    // The coordinator had started: it is stopped (its Job suspended), waited for, and only then
    // is what it wrote fetched, before the run is deleted.
    const at = (re: RegExp) => t.calls.findIndex((c) => re.test(c));
    const suspend = at(/ patch job\/loadfleet-coordinator-r1 --type=merge -p \{"spec":\{"suspend":true\}\}/);
    const waited = at(/ wait --for=delete pod -l loadfleet\.io\/run=r1,app\.kubernetes\.io\/component=coordinator --timeout=150s/);
    const copied = at(/ cp --retries=10 loadfleet-results-reader-r1:\/results\/r1/);
    expect([suspend > 0, waited > suspend, copied > waited]).toEqual([true, true, true]);
    expect(t.stderr).toContain('run r1: stopping the coordinator (it writes what it has) and waiting for it');
  });

  it('an agent on a lost node: said, and the run completes within its loss budget', async () => {
    const lost = {
      coordinatorJob: fixture('job-coordinator-running'),
      agentsJob: fixture('job-agents-one-failed-index'),
      pods: [coordinatorRunning(), fresh('pod-agent-running'), fixture('pod-agent-node-lost')],
    };
    const t = await runWrapper(
      { steps: [lost, lost, { ...lost, coordinatorJob: fixture('job-coordinator-complete') }], results: RESULTS },
      [...SWEEP, '--agents', '16', '--max-agent-loss', '1', '--no-preflight'],
    );
    expect(t.code, t.stderr).toBe(0);
    expect(t.stderr).toContain('agent 5 (loadfleet-agents-r1-5-efghi) is being removed from node pool-a-6: DeletionByTaintManager');
    expect(t.stderr).toContain('agents lost for good: 1 of --max-agent-loss 1');
  });

  it('a failed coordinator Job: its last lines, what it wrote fetched, exit 1; --cleanup never leaves the run for a look', async () => {
    const t = await runWrapper(
      {
        steps: [
          { ...running, pods: [coordinatorRunning()] },
          { coordinatorJob: fixture('job-coordinator-failed'), pods: [coordinatorRunning()] },
        ],
        results: RESULTS,
      },
      [...SWEEP, '--no-preflight', '--cleanup', 'never'],
    );
    expect(t.code).toBe(1);
    expect(t.stderr).toContain('run r1 failed: the coordinator Job failed: BackoffLimitExceeded');
    expect(t.stderr).toContain("the coordinator's last lines");
    expect(existsSync(join(t.dir, 'runs/r1/stage-1/run.json'))).toBe(true);
    expect(t.stdout).toContain('run r1: left in place (--cleanup never); loadfleet-k8s delete r1 removes it');
    expect(t.calls.some((c) => / delete (job loadfleet-agents|jobs\.batch)/.test(c))).toBe(false);
  });

  it('refuses before applying anything when the pool has no room, the volume is missing, or a permission is', async () => {
    const t = await runWrapper({ preflight: { ...cluster, pvc: undefined }, canI: false, steps: [{}] } as Script, [
      ...SWEEP,
      '--agents',
      '17',
      '--cpus',
      '4',
      ...POOL,
    ]);
    expect(t.code).toBe(1);
    expect(t.stderr).toContain('preflight: 17 agents need 4 CPUs and 1Gi each; the nodes with loadfleet.io/pool=loadgen have room for 16');
    expect(t.stderr).toContain('preflight: the results volume loadfleet-results is missing');
    expect(t.stderr).toContain('preflight: not allowed to create jobs.batch in the namespace');
    expect(t.stderr).toContain('run r1: nothing applied');
    expect(t.calls.some((c) => c.includes(' apply '))).toBe(false);
  });

  it('admission refuses the agents’ pods (Gatekeeper): FailedCreate heard at once, the coordinator stopped before the fetch, each leftover named', async () => {
    const t = await runWrapper(
      {
        steps: [{ ...running, pods: [coordinatorRunning()], events: events('gatekeeper') }],
        results: RESULTS,
        leftovers: ['pod/loadfleet-results-reader-r1'],
      },
      [...SWEEP, '--agents', '16', '--no-preflight'],
    );
    expect(t.code).toBe(1);
    expect(t.stderr).toContain(
      `run r1 failed: the agents' pods were refused (0 of 16 exist): FailedCreate: Error creating: admission webhook "validation.gatekeeper.sh" denied the request: [require-team-label] you must provide labels: {"team"}`,
    );
    expect(t.ms, 'heard at once, not after the 24 h deadline').toBeLessThan(30_000);
    const at = (re: RegExp) => t.calls.findIndex((c) => re.test(c));
    expect(at(/ patch job\/loadfleet-coordinator-r1 .*"suspend":true/)).toBeLessThan(at(/ cp --retries=10 /));
    expect(t.stderr).toContain('run r1: left behind after the delete: pod/loadfleet-results-reader-r1 (loadfleet-k8s delete r1)');
  });

  it('every agent failing at start (a wrong token): the run ends at once with their last log lines', async () => {
    const exit2 = (i: number) => {
      const pod = fixture('pod-agent-exit-2');
      const meta = pod['metadata'] as { name: string; annotations: Record<string, string> };
      meta.name = `loadfleet-agents-r1-${i}-abcde`;
      meta.annotations = { 'batch.kubernetes.io/job-completion-index': String(i) };
      return pod;
    };
    const refused = 'error LF_AUTH_REFUSED: the coordinator refused the token (HTTP 401)\n';
    const t = await runWrapper(
      {
        steps: [{ ...running, pods: [coordinatorRunning(), exit2(0), exit2(1)] }],
        podLogs: { 'loadfleet-agents-r1-0-abcde': refused, 'loadfleet-agents-r1-1-abcde': refused },
        results: RESULTS,
      },
      ['--plan', join(DEPLOY, 'k8s/base/plan.json'), '--no-preflight'],
    );
    expect(t.code).toBe(1);
    expect(t.stderr).toContain(
      'run r1 failed: every agent failed (2 of 2): exit 2 (Error); its last lines: error LF_AUTH_REFUSED: the coordinator refused the token (HTTP 401)',
    );
    expect(t.calls).toContain('--namespace=lf logs pod/loadfleet-agents-r1-0-abcde --tail=5');
    expect(t.ms).toBeLessThan(30_000);
  });

  it.each([
    ['a degraded run exits 6', 'degraded', 0, 'job-coordinator-complete', 6, 'run.json: degraded (agent loadfleet-agents-r1-2 was lost'],
    [
      'an aborted run exits with the coordinator’s 3',
      'aborted',
      3,
      'job-coordinator-failed',
      3,
      'the coordinator exited 3 (the run aborted)',
    ],
    [
      'a missed SLO with --fail-on-slo exits 4',
      'completed',
      4,
      'job-coordinator-failed',
      4,
      'the coordinator exited 4 (an SLO missed, --fail-on-slo)',
    ],
  ])('%s (read from run.json and the coordinator’s exit code)', async (_what, status, exit, job, code, line) => {
    const run = {
      status,
      status_reason: status === 'completed' ? null : 'agent loadfleet-agents-r1-2 was lost (link closed); within --max-agent-loss 1',
    };
    const t = await runWrapper(
      {
        steps: [
          { ...running, pods: [coordinatorRunning()] },
          { coordinatorJob: fixture(job), pods: [coordinatorEnded(exit)] },
        ],
        results: { '20261204T100000Z-default-7f3a/run.json': `${JSON.stringify(run)}\n` },
      },
      ['--plan', join(DEPLOY, 'k8s/base/plan.json'), '--no-preflight', ...(code === 4 ? ['--fail-on-slo'] : [])],
    );
    expect(t.code, t.stderr).toBe(code);
    expect(t.stderr).toContain(line);
  });

  it("the policy's port is the pods' (the Service's named targetPort, from its EndpointSlices), and unreadable it is refused", async () => {
    const dir = tempDir('loadfleet-k8s-port-');
    const base = JSON.parse(readFileSync(join(DEPLOY, 'k8s/base/plan.json'), 'utf8')) as { target: object };
    const plan = join(dir, 'plan.json');
    writeFileSync(plan, JSON.stringify({ ...base, target: { ...base.target, base_url: 'http://vllm.llm.svc:80/v1' } }));
    const service = {
      metadata: { name: 'vllm', namespace: 'llm' },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] },
    };
    const slices = [{ metadata: { name: 'vllm-x7k2p' }, ports: [{ name: 'http', port: 8000, protocol: 'TCP' }] }];
    const flags = ['--plan', plan, '--target-selector', 'app=vllm', '--target-namespace', 'llm'];
    const t = await runWrapper({ steps: [{}], services: { vllm: service }, endpointslices: slices }, flags, 'render');
    expect(t.code, t.stderr).toBe(0);
    const policy = parseAllDocuments(t.stdout)
      .map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: { egress: { ports: unknown[] }[] } })
      .find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'loadfleet-target-r1');
    expect(policy?.spec.egress[0]?.ports).toEqual([{ port: 8000, protocol: 'TCP' }]);
    expect(t.stderr).toContain("the target policy allows port 8000: the pods' port behind vllm.llm.svc");
    const refused = await runWrapper({ steps: [{}] }, flags, 'render');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      "--target-selector without --target-port: the policy must allow the server pods' port (after the Service's DNAT), and Service llm/vllm could not be read; give --target-port",
    );
  });
});
