// `loadfleet-k8s run`: preflight, apply the run's render, tie its objects to the coordinator Job,
// follow it (the coordinator's own view streamed, the cluster's facts printed once each, fail fast
// on a pod that cannot start), fetch the results with the placement, and leave nothing behind.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gather, preflight } from './preflight.mjs';
import { fetchResults } from './results.mjs';
import { assess, placement } from './watch.mjs';

const POLL_MS = Number(process.env.LOADFLEET_K8S_POLL_S ?? 5) * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Every object of the run, by label: what `delete` and `--cleanup post` remove. */
export const RUN_KINDS = 'jobs.batch,services,poddisruptionbudgets.policy,networkpolicies.networking.k8s.io,configmaps,secrets,pods';

export function deleteRun(k, run) {
  return k.run(['delete', RUN_KINDS, '-l', `loadfleet.io/run=${run}`, '--ignore-not-found', '--wait=false']);
}

/**
 * Owner references to the coordinator Job on every other object of the run, so the Job's TTL (or
 * its deletion) takes the agents' Job, Service, PDB, policies, ConfigMap and Secrets with it.
 */
function ownObjects(k, o, names) {
  const coordinator = `job.batch/loadfleet-coordinator-${o.run}`;
  const uid = k.run(['get', coordinator, '-o', 'jsonpath={.metadata.uid}']).stdout.trim();
  if (!uid) return false;
  const ref = { apiVersion: 'batch/v1', kind: 'Job', name: `loadfleet-coordinator-${o.run}`, uid, blockOwnerDeletion: false };
  for (const name of names.filter((n) => n !== coordinator))
    k.run(['patch', name, '--type=merge', '-p', JSON.stringify({ metadata: { ownerReferences: [ref] } })]);
  return true;
}

function look(k, o) {
  const items = (x) => x?.items ?? [];
  const pods = items(k.json(['get', 'pods', '-l', `loadfleet.io/run=${o.run}`]));
  const names = new Set(pods.map((p) => p.metadata.name));
  return {
    pods,
    events: items(k.json(['get', 'events', '--field-selector=involvedObject.kind=Pod'])).filter((e) => names.has(e.involvedObject?.name)),
    coordinatorJob: k.json(['get', 'job', `loadfleet-coordinator-${o.run}`]),
    agentsJob: k.json(['get', 'job', `loadfleet-agents-${o.run}`]),
  };
}

export async function runCommand(k, o, workDir, say, warn) {
  if (o.preflight) {
    const verdict = preflight(o, gather(k, o));
    for (const n of verdict.notes) say(`preflight: ${n}`);
    for (const w of verdict.warnings) warn(`preflight: ${w}`);
    if (verdict.errors.length > 0) {
      for (const e of verdict.errors) warn(`preflight: ${e}`);
      warn(`run ${o.run}: nothing applied (--no-preflight skips these checks)`);
      return 1;
    }
  }
  const applied = k.run(['apply', '-k', workDir, '-o', 'name']);
  if (applied.code !== 0) {
    warn(applied.stderr.trim());
    deleteRun(k, o.run);
    warn(`run ${o.run}: apply failed; what was created is deleted again`);
    return 1;
  }
  if (!ownObjects(k, o, applied.stdout.split('\n').filter(Boolean)))
    warn(`run ${o.run}: could not set owner references; delete it with: loadfleet-k8s delete ${o.run}`);
  say(
    `run ${o.run} started in namespace ${o.namespace}: ${o.agents} agents (may lose ${o.maxAgentLoss}), ${o.mode}, deadline ${o.deadlineS} s`,
  );

  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const printed = new Set();
  let logs;
  let logPod;
  let outcome;
  let reason;
  let last = { pods: [] };
  const until = Date.now() + (o.deadlineS + o.startTimeoutS + 120) * 1000;
  try {
    while (!outcome) {
      last = look(k, o);
      const verdict = assess(last, Date.now(), o);
      for (const line of verdict.lines)
        if (!printed.has(line)) {
          printed.add(line);
          warn(`run ${o.run}: ${line}`);
        }
      // The coordinator's own live view, streamed while its pod runs (a retried experiment
      // coordinator is a new pod: follow that one).
      const coordinator = last.pods.find(
        (p) => p.metadata.labels?.['app.kubernetes.io/component'] === 'coordinator' && p.status?.phase === 'Running',
      );
      if (coordinator && coordinator.metadata.name !== logPod) {
        logs?.kill();
        logPod = coordinator.metadata.name;
        logs = k.follow(['logs', '-f', `pod/${logPod}`], (l) => say(`coordinator | ${l}`));
      }
      if (verdict.outcome !== 'running') {
        outcome = verdict.outcome;
        reason = verdict.reason;
      } else if (interrupted) {
        outcome = 'failed';
        reason = 'interrupted';
      } else if (Date.now() > until) {
        outcome = 'failed';
        reason = `not finished ${o.deadlineS + o.startTimeoutS + 120} s after the start`;
      } else await sleep(POLL_MS);
    }
  } finally {
    logs?.kill();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  if (outcome === 'failed') {
    warn(`run ${o.run} failed: ${reason}`);
    // Agents would otherwise hold their CPUs until their join timeout or the deadline.
    if (o.cleanup === 'post') k.run(['delete', 'job', `loadfleet-agents-${o.run}`, '--ignore-not-found', '--wait=false']);
    const tail = k.run(['logs', `job/loadfleet-coordinator-${o.run}`, '--tail=20']);
    if (tail.code === 0 && tail.stdout.trim()) warn(tail.stdout.trimEnd());
  } else say(`run ${o.run}: the coordinator completed`);

  const ran = last.pods.some((p) => p.metadata.labels?.['app.kubernetes.io/component'] === 'coordinator' && p.spec?.nodeName);
  let fetched = { ok: false, problem: 'the coordinator never started' };
  if (ran) {
    fetched = fetchResults(k, o, o.image, (l) => warn(`run ${o.run}: ${l}`));
    const dir = join(o.out, o.run);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'placement.json'),
      `${JSON.stringify({ run: o.run, namespace: o.namespace, pods: placement(last.pods) }, null, 2)}\n`,
    );
    if (fetched.ok) say(`results: ${dir} (${fetched.files} files, ${fetched.bytes} bytes, placement.json)`);
    else warn(`run ${o.run}: results not fetched: ${fetched.problem} (loadfleet-k8s fetch ${o.run} retries)`);
  }
  if (o.cleanup === 'post' && (fetched.ok || !ran)) {
    deleteRun(k, o.run);
    say(`run ${o.run}: its objects are deleted (--cleanup post); the results volume stays`);
  } else
    say(
      `run ${o.run}: left in place (${o.cleanup === 'never' ? '--cleanup never' : 'results not fetched'}); loadfleet-k8s delete ${o.run} removes it`,
    );
  return outcome === 'complete' && fetched.ok ? 0 : 1;
}
