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
  steps: Obj[];
  logs?: string[];
  results?: Record<string, string>;
  cpFailures?: number;
}

async function runWrapper(script: Script, flags: string[]) {
  const dir = tempDir('loadfleet-k8s-run-');
  writeFileSync(join(dir, 'script.json'), JSON.stringify(script));
  const kubectl = join(dir, 'kubectl');
  writeFileSync(kubectl, `#!/bin/sh\nexec node ${join(FIXTURES, 'fake-kubectl.mjs')} "$@"\n`, { mode: 0o755 });
  const started = Date.now();
  const args = ['run', '--image', TEST_IMAGE, '--run', 'r1', '-n', 'lf', '--out', join(dir, 'runs'), ...flags];
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
  const calls = readFileSync(join(dir, 'calls'), 'utf8').trim().split('\n');
  return { ...res, ms: Date.now() - started, calls, dir };
}

const cluster = {
  namespace: { metadata: { name: 'lf' } },
  pvc: { status: { phase: 'Bound' } },
  nodes: items('nodes-16'),
  pods: items('pods-kube-system'),
};
const running = { coordinatorJob: fixture('job-coordinator-running'), agentsJob: fixture('job-agents-running') };
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
    expect(t.stdout).toContain('run r1: the coordinator completed');
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
    expect(t.calls.at(-1)).toMatch(
      /^--namespace=lf delete jobs\.batch,services,.*,secrets,pods -l loadfleet\.io\/run=r1 --ignore-not-found --wait=false$/,
    );
  });

  it('a coordinator that cannot schedule (no results volume) ends the run at --start-timeout, frees the agents, leaves nothing', async () => {
    const t = await runWrapper({ steps: [{ ...running, pods: [fresh('pod-coordinator-pvc-missing'), fresh('pod-agent-running')] }] }, [
      ...SWEEP,
      '--start-timeout',
      '2',
      '--no-preflight',
    ]);
    expect(t.code).toBe(1);
    expect(t.stderr).toMatch(
      /run r1 failed: coordinator \(loadfleet-coordinator-r1-klmno\) cannot start after \d+ s: Unschedulable: .*"loadfleet-results" not found/,
    );
    expect(t.ms, 'the start bound, not the 24 h deadline').toBeLessThan(60_000);
    expect(t.calls).toContain('--namespace=lf delete job loadfleet-agents-r1 --ignore-not-found --wait=false');
    expect(t.calls.some((c) => c.includes(' cp '))).toBe(false);
    expect(t.calls.at(-1)).toMatch(/ delete jobs\.batch,.* -l loadfleet\.io\/run=r1 /);
  });

  it('an agent whose volume does not mount: the FailedMount message, at the bound', async () => {
    const t = await runWrapper(
      {
        steps: [{ ...running, pods: [coordinatorRunning(), fresh('pod-agent-mount-pending')], events: [fixture('event-failed-mount')] }],
        results: RESULTS,
      },
      ['--plan', join(DEPLOY, 'k8s/base/plan.json'), '--start-timeout', '1', '--no-preflight'],
    );
    expect(t.code).toBe(1);
    expect(t.stderr).toMatch(
      /run r1 failed: agent 3 \(loadfleet-agents-r1-3-uvwxy\) cannot start after \d+ s: FailedMount: .*persistentvolumeclaim "traces" not found/,
    );
    // The coordinator had started: what it wrote is fetched before the run is deleted.
    expect(t.calls.some((c) => c.includes(' cp --retries=10 loadfleet-results-reader-r1:/results/r1'))).toBe(true);
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
});
